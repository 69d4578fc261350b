package hold

import (
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The setting flags (--resolution, --ms, --slack, --dma-latency) are
// declared here once, for apply and ui's forms (RegisterApply), run
// (RegisterRun) and measure (RegisterMeasureSetting); each command's help
// says what the setting is held for.

// settingVars are where a command keeps the setting flags it has (nil: a
// flag it does not have).
type settingVars struct {
	resolution *uint32
	ms         *float64
	slack      *time.Duration
	dmaLatency *int32
}

// settingHelp is each setting flag's help on one command.
type settingHelp struct{ resolution, ms, slack, dmaLatency string }

// registerSetting declares the setting flags v names on fl.
func registerSetting(fl *pflag.FlagSet, v settingVars, help settingHelp) {
	if v.resolution != nil {
		fl.Uint32Var(v.resolution, "resolution", 0, help.resolution)
	}
	if v.ms != nil {
		fl.Float64Var(v.ms, "ms", 0, help.ms)
	}
	if v.slack != nil {
		fl.DurationVar(v.slack, "slack", 0, help.slack)
	}
	if v.dmaLatency != nil {
		fl.Int32Var(v.dmaLatency, "dma-latency", 0, help.dmaLatency)
	}
}

// settingSet reports which of the setting flags were given on fl.
func settingSet(fl *pflag.FlagSet) (resolution, ms, slack, dmaLatency bool) {
	return fl.Changed("resolution"), fl.Changed("ms"), fl.Changed("slack"), fl.Changed("dma-latency")
}

// RegisterMeasureSetting declares measure's setting flags on fl: a period
// requested (Windows) or the measuring thread's slack (Linux) for the
// measurement only. options.Setting checks them.
func RegisterMeasureSetting(fl *pflag.FlagSet, resolution *uint32, ms *float64, slack *time.Duration) {
	registerSetting(fl, settingVars{resolution: resolution, ms: ms, slack: slack}, settingHelp{
		resolution: "Windows: request this timer period, in 100 ns units",
		ms:         "Windows: request this timer period, in milliseconds",
		slack:      "Linux: the measuring thread's timer slack (1ns..1s)",
	})
}

// RunFlags is run's setting on the command line.
type RunFlags struct {
	Resolution    uint32
	ResolutionSet bool
	MS            float64
	MSSet         bool
	Slack         time.Duration
	SlackSet      bool
	DMALatency    int32
	DMALatencySet bool
}

// RegisterRun declares run's setting flags on fl, into f.
func RegisterRun(fl *pflag.FlagSet, f *RunFlags) {
	registerSetting(fl, settingVars{resolution: &f.Resolution, ms: &f.MS, slack: &f.Slack, dmaLatency: &f.DMALatency}, settingHelp{
		resolution: "Windows: hold this timer period, in 100 ns units, while the program runs",
		ms:         "Windows: hold this timer period, in milliseconds, while the program runs",
		slack:      "Linux: the program's timer slack (1ns..1s)",
		dmaLatency: "Linux: hold /dev/cpu_dma_latency at this many µs while the program runs (root)",
	})
}

// CheckRun refuses, as usage errors, the setting flags of run that cmd was
// given and the OS q describes does not have, and records in f which were
// given.
func CheckRun(cmd *cobra.Command, q *timerinfo.Report, f *RunFlags) error {
	if err := options.WindowsOnly(cmd, q, "resolution", "ms"); err != nil {
		return err
	}
	if err := options.LinuxOnly(cmd, q, "slack", "dma-latency"); err != nil {
		return err
	}
	f.ResolutionSet, f.MSSet, f.SlackSet, f.DMALatencySet = settingSet(cmd.Flags())
	return nil
}

// ApplyFlags is apply's command line: each value, and for those whose
// absence matters, whether it was given.
type ApplyFlags struct {
	Resolution    uint32
	ResolutionSet bool
	MS            float64
	MSSet         bool
	DMALatency    int32
	DMALatencySet bool
	PID           int
	PIDSet        bool
	Slack         time.Duration
	SlackSet      bool
	For           time.Duration
	ForSet        bool
	NoConsole     bool
	NoEsc         bool
	Persist       bool
	DryRun        bool
	AsStartup     bool
	// Boot is --boot: --persist installs the Windows service that holds
	// from boot; AsService is --as-service, the service's own command line.
	Boot      bool
	AsService bool
	// Listen is --listen ADDR: the holder's state on a Prometheus endpoint.
	Listen string
	// While is --while PROGRAM[,PROGRAM...]: hold only while one of them
	// runs.
	While    string
	WhileSet bool
	// WhileUser is --while-user USER: count only that user's processes.
	WhileUser    string
	WhileUserSet bool
	// Simulated is set when the hold runs on the model (--simulate).
	Simulated bool
}

// RegisterApply declares apply's flags on fl, into f. The apply command
// and tickscope ui's Hold, Start at logon and slack forms parse with these
// same flags (ParseApply), so that a value is refused in the same words.
func RegisterApply(fl *pflag.FlagSet, f *ApplyFlags) {
	registerSetting(fl, settingVars{resolution: &f.Resolution, ms: &f.MS, dmaLatency: &f.DMALatency}, settingHelp{
		resolution: "Windows: hold this timer period, in 100 ns units",
		ms:         "Windows: hold this timer period, in milliseconds",
		dmaLatency: "Linux: hold /dev/cpu_dma_latency at this many µs (0.." + strconv.Itoa(timerinfo.DMALatencyDefaultUs) + "; root)",
	})
	fl.IntVar(&f.PID, "pid", 0, "Linux: the process whose timer slack --slack sets")
	registerSetting(fl, settingVars{slack: &f.Slack}, settingHelp{
		slack: "Linux, with --pid: the timer slack to set (0 restores the process's default, at most 1s)",
	})
	fl.DurationVar(&f.For, "for", 0, "release after this long (default: hold until ESC or Ctrl+C)")
	fl.BoolVar(&f.NoConsole, "no-console", false, "Windows: detach from the console while holding")
	fl.BoolVar(&f.NoEsc, "no-esc", false, "do not watch the ESC key")
	fl.BoolVar(&f.Persist, "persist", false, "start this holder at every logon (Windows) or boot (Linux); undo with tickscope startup remove")
	fl.BoolVar(&f.DryRun, "dry-run", false, "with --persist: print the task or unit it would install, and change nothing")
	fl.BoolVar(&f.AsStartup, "as-startup", false, "hold as the startup holder, which status reports and startup remove ends (the task and unit pass it)")
	fl.BoolVar(&f.Boot, "boot", false, "Windows, with --persist: install a service that holds from boot, before anyone logs on (elevated)")
	fl.BoolVar(&f.AsService, "as-service", false, "Windows: hold as the boot service, under the service manager (the service passes it)")
	fl.StringVar(&f.Listen, "listen", "", "serve the holder's state as Prometheus metrics on ADDR/metrics (PORT or :PORT bind 127.0.0.1)")
	fl.StringVar(&f.While, "while", "", "hold only while one of these programs runs: PROGRAM[,PROGRAM...], each a name (game.exe; on Windows game is game.exe; any user's process may take a name) or an executable's absolute path")
	fl.StringVar(&f.WhileUser, "while-user", "", "with --while: count only the processes this user started (Linux: a name or a user id; Windows: a name or a SID)")
}

// CheckApply refuses, as usage errors, the flags of apply that cmd was
// given and the OS q describes does not have, and records in f which
// flags were given.
func CheckApply(cmd *cobra.Command, q *timerinfo.Report, f *ApplyFlags) error {
	if err := options.WindowsOnly(cmd, q, "resolution", "ms", "no-console", "as-service"); err != nil {
		return err
	}
	if err := options.LinuxOnly(cmd, q, "dma-latency", "pid", "slack"); err != nil {
		return err
	}
	changed := cmd.Flags().Changed
	f.ResolutionSet, f.MSSet, f.SlackSet, f.DMALatencySet = settingSet(cmd.Flags())
	f.PIDSet, f.ForSet = changed("pid"), changed("for")
	f.WhileSet, f.WhileUserSet = changed("while"), changed("while-user")
	switch {
	case !f.WhileUserSet || q.Linux != nil:
	case q.Windows != nil && q.Arch == "simulated":
		return options.BadFlag("while-user", f.WhileUser, "not on the model: its processes have no user; leave it out with --simulate")
	case q.Windows == nil:
		return options.BadFlag("while-user", f.WhileUser, "a Linux and Windows flag; on %s name the program by the absolute path of its executable, which only who may write there can replace", q.OS)
	}
	return nil
}

// ParseApply parses apply's arguments as the command line does (its flags,
// options.Strict's rules, empty values refused, the same errors), for a
// caller with no command line: tickscope ui. CheckApply follows, once the
// OS is known.
func ParseApply(args []string) (*cobra.Command, *ApplyFlags, error) {
	f := &ApplyFlags{}
	cmd := &cobra.Command{Use: "apply"}
	RegisterApply(cmd.Flags(), f)
	options.Strict(cmd.Flags())
	if err := cmd.Flags().Parse(args); err != nil {
		return nil, nil, options.FlagError(err)
	}
	if err := options.EmptyValues(cmd.Flags()); err != nil {
		return nil, nil, err
	}
	return cmd, f, nil
}

// ApplyHelp is apply's --help: what it holds on each OS, and how --persist,
// --boot and --while change when it holds.
const ApplyHelp = `Hold a timer setting, say what the OS granted and what a wait takes now, and
release it when ESC or Ctrl+C is pressed, the console closes, or --for elapses.
Every 5 s and after each resume from sleep it checks the setting is still in
force and re-applies it if lost, saying so on stderr (reapplies in --json);
between checks it uses no CPU. --listen serves its state as Prometheus metrics.

Windows: --resolution R (100 ns units) or --ms X requests the timer period
with NtSetTimerResolution and opts tickscope out of Windows 11's throttling of
hidden processes' requests. Since Windows 10 2004 a request affects only the
process that makes it, unless GlobalTimerResolutionRequests is set on
Windows 11 / Server 2022+ (tickscope global on): in per-process mode the
request held here speeds up tickscope itself and nothing else.
  --no-console  detach from the console (Ctrl+C no longer reaches it; ESC is
                then watched desktop-wide unless --no-esc)
  --persist     register the Task Scheduler task "tickscope" that starts
                tickscope-holder.exe (beside tickscope.exe: the same program
                with no console window) 15 s after your logon, start it, and
                return; undo with tickscope startup remove. Refused unless
                requests are global in the running boot.
  --persist --boot
                install and start the Windows service "tickscope" instead,
                which holds from boot, before anyone logs on: it runs this
                tickscope.exe as NT AUTHORITY\LocalService with only
                SeChangeNotifyPrivilege, answers the service manager's Stop
                and Shutdown, and releases. Elevated only, from a
                tickscope.exe under Program Files (a service's program must
                be one only administrators can replace); refused, as
                --persist is, unless requests are global.

Linux: --dma-latency US holds /dev/cpu_dma_latency (root) while tickscope
runs; the kernel drops it when tickscope exits, also when it is killed.
--persist installs the systemd unit tickscope-holder.service instead (root),
which starts at boot (--boot is refused: there is nothing more to ask).
--pid PID --slack D sets another process's timer slack through
/proc/PID/timerslack_ns (CAP_SYS_NICE) and returns at once, printing the value
before and after and the command that puts it back.

--while PROGRAM[,PROGRAM...] holds the setting only while one of the programs
runs: it waits with nothing held, takes the setting within about a second of
the first one starting and releases it when the last one exits, printing each
start and exit with the program, its process id and the time. A PROGRAM is a
name (Windows: the image name, game.exe, in any case, and a name without .exe
is matched with it: game is game.exe; Linux: the process name the kernel
shows, or a longer executable name) or the absolute path of the executable
(Windows: also without .exe; Linux: a link matches the program it leads to,
started by either path). A process once found is held for until it exits,
also when it renames itself. A process whose path cannot be read (another
user's) is not counted, and said once. A name is anyone's: any user may run a
program of that name, and on Linux any process may take any name (echo -n game
> /proc/self/comm). A path counts only the file at that path, read again when
the file is replaced (Linux: its device and inode, so that a file another user
shows there in a namespace of their own is not it; Windows: its volume and file
id, so that a hard link counts and a look-alike path does not). --while-user
USER counts only the processes that user started (Linux: a name or a user id,
against the real user id; Windows: a name or a SID, against the process token's
user, which another user's process shows only to an elevated holder). It looks
every second (Linux: /proc; Windows: a process snapshot), at a cost
BENCHMARKS.md gives. With --persist the startup holder does the same. Not with
--slack: a process's slack is its own; use run --slack.

--simulate SCENARIO holds on the model of Windows timers instead (its
game-session scenario runs game.exe twice), changing nothing on this machine.

--json prints the result as JSON when the hold ends (docs/json.md).`
