package measure

import (
	"slices"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/rawfile"
)

// BenchFlags are the judgement flags that only a bench's file takes.
var BenchFlags = []string{"prefer", "rows", "budget-p50", "budget-p95", "budget-lateness"}

// CheckFlags refuses a judgement flag that does not apply to f, read from
// path: any bench flag on a measure, curve or compare file, and a flag of
// the other OS's bench on a bench file. changed says whether a flag was
// given on the command line.
func CheckFlags(f *rawfile.File, path string, changed func(flag string) bool) error {
	for _, flag := range BenchFlags {
		if !changed(flag) {
			continue
		}
		switch {
		case f.Command != "bench":
			return options.Usagef("--%s judges a bench's file; %s is a %s file, which analyze summarises without judging", flag, path, f.Command)
		case f.Query.Linux != nil && slices.Contains(WindowsBenchFlags, flag):
			return options.Usagef("--%s judges the Windows bench; %s is from the Linux bench (its budget is --budget-lateness)", flag, path)
		case f.Query.Linux == nil && slices.Contains(LinuxBenchFlags, flag):
			return options.Usagef("--%s judges the Linux bench; %s is from the Windows bench (its budgets are --budget-p50 and --budget-p95)", flag, path)
		}
	}
	return nil
}
