// Package tiers holds the rule of how tickscope's packages may import each
// other, and its test: every package sits in one tier, and imports only
// packages of its own tier or of tiers below it; a use case never imports
// another use case (what two share moves down); and only cmd/tickscope
// links the command-line parser (cobra, pflag). CONTRIBUTING.md's layout
// table names the same tiers.
//
// The package has no code of its own: its test reads the import graph with
// `go list` for every OS tickscope ships.
package tiers

// Tier is a level of the import graph, lowest first.
type Tier int

const (
	// Base: data types, role interfaces, statistics, printable text, the
	// bounds of what a value may be, the bindings of the OS's calls.
	Base Tier = iota
	// Codec: the formats tickscope reads and writes, over the base's types.
	Codec
	// Engine: taking samples, judging them, the model of Windows timers,
	// the platform, rendering, the timer state as read (what watch, hold
	// and the metrics share). The metrics endpoint is here, not among the
	// use cases: it is a renderer, the Prometheus exposition of the timer
	// and holder state that watch and apply give it, and no command of its
	// own.
	Engine
	// UseCase: what a user does (hold, measure, watch, ...), one room
	// each; a room never imports another.
	UseCase
	// Dashboard: ui, which calls the use cases with typed requests.
	Dashboard
	// Command: the command line and the tools, the only places that parse
	// arguments.
	Command
)

func (t Tier) String() string {
	return [...]string{"base", "codec", "engine", "use case", "dashboard", "command"}[t]
}

// Of is each package's tier, by its path inside the module; a path that
// ends in "/" is every package below it.
var Of = map[string]Tier{
	"internal/printable":               Base,
	"internal/printable/printabletest": Base,
	"internal/stats":                   Base,
	"internal/timerinfo":               Base,
	"internal/version":                 Base,
	"internal/testlock":                Base,
	"internal/plantest":                Base,
	"internal/nativewait":              Base,
	"internal/winapi":                  Base,
	"internal/httpserver":              Base,
	"internal/options":                 Base,
	"internal/who":                     Base,
	"internal/seam":                    Base,
	"internal/tiers":                   Base,
	"internal/tracefs":                 Base,
	"internal/procstat":                Base,
	"precise":                          Base,

	"internal/rawfile":    Codec,
	"internal/cyclictest": Codec,
	"internal/persist":    Codec,
	"internal/etwkernel":  Codec,

	"internal/sample":      Engine,
	"internal/sweep":       Engine,
	"internal/sim":         Engine,
	"internal/sim/simtest": Engine,
	"internal/platform":    Engine,
	"internal/machine":     Engine,
	"internal/outfile":     Engine,
	"internal/outputs":     Engine,
	"internal/term":        Engine,
	"internal/report":      Engine,
	"internal/htmlreport":  Engine,
	"internal/attribution": Engine,
	"internal/timerstate":  Engine,
	"internal/metrics":     Engine,
	"internal/waitcheck":   Engine,

	"internal/hold":    UseCase,
	"internal/global":  UseCase,
	"internal/startup": UseCase,
	"internal/bench":   UseCase,
	"internal/measure": UseCase,
	"internal/watch":   UseCase,
	"internal/explain": UseCase,
	"internal/inspect": UseCase,

	"internal/ui": Dashboard,

	"cmd/tickscope": Command,
	"tools/":        Command,
}

// CommandLineParsers are the modules only cmd/tickscope may link.
var CommandLineParsers = []string{"github.com/spf13/cobra", "github.com/spf13/pflag"}

// CommandLine is the one package that may link them.
const CommandLine = "cmd/tickscope"
