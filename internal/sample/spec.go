package sample

import (
	"slices"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// NamedMethod finds the named method on host, where names it in the error
// ("Linux", "the model"); "" is the default, the host's first method
// (firstRelative: its first relative one, if any). An unknown name is a
// usage error of --method.
func NamedMethod(host seam.Host, where, name string, firstRelative bool) (seam.Method, error) {
	methods := host.Methods()
	if name == "" {
		name = methods[0].Name
		if i := slices.IndexFunc(methods, func(m seam.Method) bool { return m.Schedule == seam.Relative }); firstRelative && i >= 0 {
			name = methods[i].Name
		}
	}
	m, err := seam.FindMethod(host, name)
	if err != nil {
		return m, options.BadFlag("method", name, "valid methods on %s: %s", where, seam.MethodNames(methods))
	}
	return m, nil
}

// OneDelay is the spec of samples waits of delay by the named method (the
// host's first when ""), without its setting, checked as --method,
// --delay and --samples: what measure and explain both take.
func OneDelay(host seam.Host, where, methodName string, delay time.Duration, samples int) (Spec, error) {
	if samples < 1 || samples > MaxSamples {
		return Spec{}, options.BadFlag("samples", samples, "allowed 1..%d", MaxSamples)
	}
	m, err := NamedMethod(host, where, methodName, false)
	if err != nil {
		return Spec{}, err
	}
	if err := options.Delay("delay", delay); err != nil {
		return Spec{}, err
	}
	if m.WholeMilliseconds && delay%time.Millisecond != 0 {
		return Spec{}, options.BadFlag("delay", delay, "method %s waits whole milliseconds: use 1ms, 2ms, ...", m.Name)
	}
	return Spec{Method: m.Name, Delay: delay, Samples: samples, Warmup: DefaultWarmup(samples)}, nil
}
