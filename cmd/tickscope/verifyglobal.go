package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// childSamples is how many Sleep(1) waits the child measures: at the
// 15.625 ms default, about 0.6 s.
const childSamples = 40

func (a *app) verifyGlobalCommand() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "verify-global",
		Short: "Windows: measure whether a request in one process speeds up another",
		Long: `Windows: does a timer request in one process affect another process's waits
on this machine right now? It needs the timer at rest: when something already
holds a finer period it reports "inconclusive", names that period, and exits 1.

Otherwise a child (this executable, running measure) measures Sleep(1) with no
request of its own, twice: with nothing held, then while this process holds
the finest period. It reports "global" or "per-process" with both figures.
Nothing outlives the command.

Linux has no global tick request; there it says what the equivalents are.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.verifyGlobal(cmd.Context(), asJSON) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

// globalCheck is what verify-global prints as JSON.
type globalCheck struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason"`
	// Sleep(1) p50 of the child with nothing held and with the request held
	// here (0 when not measured).
	BaselineP50Ns int64  `json:"baseline_p50_ns"`
	HeldP50Ns     int64  `json:"held_p50_ns"`
	Held100ns     uint32 `json:"held_100ns"`
	RequestModel  string `json:"request_model,omitempty"`
}

// linuxGlobalText is what verify-global says on Linux.
const linuxGlobalText = `Linux has no global timer-period request: there is no tick to ask for.
  - timer slack is each thread's own and is inherited by the threads and
    programs it starts: tickscope run --slack 1us -- CMD
  - /dev/cpu_dma_latency is the one system-wide request: while it is held,
    every CPU stays out of idle states slower to leave than the value:
    tickscope apply --dma-latency 0 (root)
  - whether high-resolution timers are active: tickscope query shows it.`

func (a *app) verifyGlobal(ctx context.Context, asJSON bool) error {
	host := machineHost()
	q, err := host.Query()
	if err != nil {
		return err
	}
	if q.Windows == nil {
		if asJSON {
			return writeJSON(a.stdout, globalCheck{Verdict: "not applicable", Reason: linuxGlobalText})
		}
		if q.Linux == nil {
			fmt.Fprintf(a.stdout, "%s has no timer request tickscope can check.\n", runtime.GOOS)
			return nil
		}
		fmt.Fprintln(a.stdout, linuxGlobalText)
		return nil
	}
	release, err := platform.Lock("bench")
	if err != nil {
		return err
	}
	defer release()
	win := q.Windows
	res := globalCheck{Held100ns: win.Finest100ns, RequestModel: win.RequestModel}
	if win.Current100ns < win.Coarsest100ns {
		res.Verdict = timerinfo.VerdictInconclusive
		res.Reason = fmt.Sprintf("something already holds the timer at %s ms (the coarsest is %s ms): close it and run again", timerinfo.FormatPeriodMS(win.Current100ns), timerinfo.FormatPeriodMS(win.Coarsest100ns))
		return a.writeGlobalCheck(res, asJSON)
	}
	if res.BaselineP50Ns, err = a.childSleepP50(ctx); err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	platform.IgnoreTimerThrottling()
	granted, releaseRequest, err := a.holdSetting(host, timerinfo.Setting{Resolution100ns: win.Finest100ns})
	if err != nil {
		return err
	}
	res.Held100ns = granted.Resolution100ns
	res.HeldP50Ns, err = a.childSleepP50(ctx)
	releaseRequest()
	if err != nil {
		return err
	}
	res.Verdict, res.Reason = timerinfo.GlobalVerdict(res.BaselineP50Ns, res.HeldP50Ns, res.Held100ns)
	return a.writeGlobalCheck(res, asJSON)
}

func (a *app) writeGlobalCheck(res globalCheck, asJSON bool) error {
	if asJSON {
		if err := writeJSON(a.stdout, res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(a.stdout, "requests here are %s: %s\n", res.Verdict, res.Reason)
		if res.BaselineP50Ns != 0 {
			fmt.Fprintf(a.stdout, "  other process, nothing held   Sleep(1) p50 %s ms\n", msText(res.BaselineP50Ns))
			fmt.Fprintf(a.stdout, "  other process, %-14s Sleep(1) p50 %s ms\n", timerinfo.FormatPeriodMS(res.Held100ns)+" ms held", msText(res.HeldP50Ns))
		}
		fmt.Fprintf(a.stdout, "  query's request model         %s\n", res.RequestModel)
	}
	if res.Verdict == timerinfo.VerdictInconclusive {
		return &exitCode{code: 1}
	}
	return nil
}

// childSleepP50 runs this executable's measure of Sleep(1) in a child
// process and returns its p50.
func (a *app) childSleepP50(ctx context.Context) (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, &seam.OSError{Call: "find this executable", Err: err}
	}
	child := exec.CommandContext(ctx, exe, "measure", "--method", "sleep", "--delay", "1ms", "--samples", strconv.Itoa(childSamples), "--json")
	child.Stderr = a.stderr
	out, err := child.Output()
	if err != nil {
		return 0, &seam.OSError{Call: "the child measurement (" + exe + " measure)", Err: err}
	}
	var m report.Measurement
	if err := json.Unmarshal(out, &m); err != nil || m.Summary.P50 == 0 {
		return 0, fmt.Errorf("the child measurement printed no p50: %v", err)
	}
	return m.Summary.P50, nil
}
