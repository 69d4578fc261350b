package explain

import (
	"errors"
	"fmt"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// Layer is how much explain can see: LayerAuto picks the deepest this
// machine allows.
type Layer int

const (
	LayerAuto Layer = -1
	// Layer0 reads /proc counters only: no root, any kernel.
	Layer0 Layer = 0
	// Layer1 traces with tracefs: root.
	Layer1 Layer = 1
)

// ParseLayer reads --layer: auto, 0 or 1.
func ParseLayer(s string) (Layer, error) {
	switch s {
	case "", "auto":
		return LayerAuto, nil
	case "0":
		return Layer0, nil
	case "1":
		return Layer1, nil
	}
	return LayerAuto, options.BadFlag("layer", s, "allowed auto, 0 (no root: schedstat and /proc counters) or 1 (root: tracefs)")
}

// Options are what explain measures and how it judges.
type Options struct {
	// Method, Delay and Samples are measure's (sample.OneDelay checks
	// them); Setting the timer setting held while measuring.
	Method  string
	Delay   time.Duration
	Samples int
	Setting timerinfo.Setting
	// Over is the threshold: a wait later than it is explained. 0 means
	// the run's own p99 lateness.
	Over time.Duration
	// Layer is the layer asked for.
	Layer Layer
	// Load is --load's busy threads, not yet started (nil for none): the
	// host Run is given is the one sample.LoadRequest.Host gave with it.
	// They run for the whole measurement.
	Load *sample.Load
	// Worst is how many of the late waits the text shows one by one.
	Worst int
	// FlightRecorder keeps of the trace only the late waits' windows
	// (layer 1 on Linux; Over is then required): see flightRecorder.
	FlightRecorder bool
}

// MaxOver bounds --over.
const MaxOver = 10 * time.Second

// MaxWorst bounds --worst.
const MaxWorst = 1000

// MaxTracedSamples is the most --samples a run that interleaves untraced
// chunks (layer 1 on Linux) takes: its chunks add half as many waits
// again (planInterleave), and one run measures at most sample.MaxSamples,
// the most a --raw file holds.
const MaxTracedSamples = 66_699

// checkSamples checks --samples against the layer a run takes: with
// untraced chunks interleaved, at most MaxTracedSamples. It runs once the
// layer is chosen, before anything is traced or measured.
func checkSamples(samples int, interleaved bool) error {
	if interleaved && samples > MaxTracedSamples {
		return options.BadFlag("samples", samples, "allowed 1..%d at layer 1, whose untraced chunks add half as many waits again (at most %d in all; --layer 0 takes %d)", MaxTracedSamples, sample.MaxSamples, sample.MaxSamples)
	}
	return nil
}

// Check checks what Options can say wrong by itself, as usage errors.
func (o Options) Check() error {
	if o.Over < 0 || o.Over > MaxOver {
		return options.BadFlag("over", o.Over, "allowed 0 (the run's own p99) up to %s", MaxOver)
	}
	if o.Worst < 1 || o.Worst > MaxWorst {
		return options.BadFlag("worst", o.Worst, "allowed 1..%d", MaxWorst)
	}
	if o.Layer != LayerAuto && o.Layer != Layer0 && o.Layer != Layer1 {
		return options.BadFlag("layer", int(o.Layer), "allowed auto, 0 or 1")
	}
	if o.FlightRecorder {
		if o.Over == 0 {
			return options.Usagef("--flight-recorder with --over 0s (the run's own p99, the default): allowed only with --over 1ns up to %s, the threshold it keeps windows by, which must be known before the run (the run's own p99 is known only at its end)", MaxOver)
		}
		if o.Layer == Layer0 {
			return options.Usagef("--flight-recorder with --layer 0: allowed only at layer 1 (auto or 1), whose trace it bounds; layer 0 keeps no trace")
		}
	}
	return nil
}

// ErrUnsupported is explain on an OS it cannot explain yet.
var ErrUnsupported = errors.New("explain attributes late waits on Linux and Windows only: this OS's tracing is not built")

// LayerError is a layer asked for that this machine cannot give.
type LayerError struct {
	Layer Layer
	Why   string
	// By is the flag that asked for it when --layer did not
	// (--flight-recorder asks for layer 1); empty if --layer did.
	By string
}

func (e *LayerError) Error() string {
	if e.By != "" {
		return fmt.Sprintf("layer %d, which %s needs, cannot run here: %s", e.Layer, e.By, e.Why)
	}
	return fmt.Sprintf("layer %d cannot run here: %s", e.Layer, e.Why)
}
