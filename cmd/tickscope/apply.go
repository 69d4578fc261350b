package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/escape"
	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/sample"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// startupDelaySeconds is how long after logon the logon holder starts.
const startupDelaySeconds = 15

type applyOptions struct {
	resolution uint32
	ms         float64
	dmaLatency int32
	pid        int
	slack      time.Duration
	holdFor    time.Duration
	noConsole  bool
	noEsc      bool
	persist    bool
	asStartup  bool
	dryRun     bool
	asJSON     bool
}

func (a *app) applyCommand() *cobra.Command {
	var o applyOptions
	cmd := &cobra.Command{
		Use:     "apply",
		Aliases: []string{"hold"},
		Short:   "Hold a timer setting until ESC, Ctrl+C or --for, then release it",
		Long: `Hold a timer setting, say what the OS granted and what a wait takes now, and
release it when ESC or Ctrl+C is pressed, the console closes, or --for elapses.
While holding it uses no CPU.

Windows: --resolution R (100 ns units) or --ms X requests the timer period
with NtSetTimerResolution and opts tickscope out of Windows 11's throttling of
hidden processes' requests. Since Windows 10 2004 a request affects only the
process that makes it, unless GlobalTimerResolutionRequests is set on
Windows 11 / Server 2022+ (tickscope global on): in per-process mode the
request held here speeds up tickscope itself and nothing else.
  --no-console  detach from the console (Ctrl+C no longer reaches it; ESC is
                then watched desktop-wide unless --no-esc)
  --persist     register the Task Scheduler task "tickscope" that starts this
                holder 15 s after logon, start it, and return; undo with
                tickscope startup remove. Refused unless requests are global.

Linux: --dma-latency US holds /dev/cpu_dma_latency (root) while tickscope
runs; the kernel drops it when tickscope exits, also when it is killed.
--persist installs the systemd unit tickscope-holder.service instead (root).
--pid PID --slack D sets another process's timer slack through
/proc/PID/timerslack_ns (CAP_SYS_NICE) and returns at once, printing the value
before and after and the command that puts it back.

--json prints the result as JSON when the hold ends (docs/json.md).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.apply(cmd, &o) },
	}
	f := cmd.Flags()
	f.Uint32Var(&o.resolution, "resolution", 0, "Windows: hold this timer period, in 100 ns units")
	f.Float64Var(&o.ms, "ms", 0, "Windows: hold this timer period, in milliseconds")
	f.Int32Var(&o.dmaLatency, "dma-latency", 0, "Linux: hold /dev/cpu_dma_latency at this many µs (0.."+strconv.Itoa(timerinfo.DMALatencyDefaultUs)+"; root)")
	f.IntVar(&o.pid, "pid", 0, "Linux: the process whose timer slack --slack sets")
	f.DurationVar(&o.slack, "slack", 0, "Linux, with --pid: the timer slack to set (0 restores the process's default, at most 1s)")
	f.DurationVar(&o.holdFor, "for", 0, "release after this long (default: hold until ESC or Ctrl+C)")
	f.BoolVar(&o.noConsole, "no-console", false, "Windows: detach from the console while holding")
	f.BoolVar(&o.noEsc, "no-esc", false, "do not watch the ESC key")
	f.BoolVar(&o.persist, "persist", false, "start this holder at every logon (Windows) or boot (Linux); undo with tickscope startup remove")
	f.BoolVar(&o.dryRun, "dry-run", false, "with --persist: print the task or unit it would install, and change nothing")
	f.BoolVar(&o.asStartup, "as-startup", false, "hold as the startup holder, which status reports and startup remove ends (the task and unit pass it)")
	f.BoolVar(&o.asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

// holdReport is what apply prints as JSON when the hold ends.
type holdReport struct {
	Requested timerinfo.Setting `json:"requested"`
	Granted   timerinfo.Setting `json:"granted"`
	// Check is a short measurement of the default wait with the setting in
	// force: Windows can report success and ignore a request.
	Check            *waitCheck `json:"check,omitempty"`
	RequestModel     string     `json:"request_model,omitempty"`
	ThrottlingOptOut string     `json:"throttling_opt_out,omitempty"`
	HeldNs           int64      `json:"held_ns"`
	// EndedBy is "for", "esc" or "signal" (Ctrl+C, the console closing, or
	// a termination request).
	EndedBy  string   `json:"ended_by"`
	Warnings []string `json:"warnings"`
}

// waitCheck is a short measurement of one wait method.
type waitCheck struct {
	Method  string `json:"method"`
	DelayNs int64  `json:"delay_ns"`
	Samples int    `json:"samples"`
	P50Ns   int64  `json:"p50_ns"`
	P99Ns   int64  `json:"p99_ns"`
}

func (a *app) apply(cmd *cobra.Command, o *applyOptions) error {
	host := machineHost()
	q, err := host.Query()
	if err != nil {
		return err
	}
	if err := windowsOnly(cmd, q, "resolution", "ms", "no-console"); err != nil {
		return err
	}
	if err := linuxOnly(cmd, q, "dma-latency", "pid", "slack"); err != nil {
		return err
	}
	if cmd.Flags().Changed("for") && o.holdFor <= 0 {
		return badFlag("for", o.holdFor, "allowed above 0 (leave it out to hold until ESC or Ctrl+C)")
	}
	if o.dryRun && !o.persist {
		return usagef("--dry-run shows what --persist would install: give --persist too")
	}
	if o.persist && cmd.Flags().Changed("for") {
		return usagef("--persist and --for %v: a startup holder holds until it is removed; give one of them", o.holdFor)
	}
	switch {
	case q.Windows != nil:
		if !cmd.Flags().Changed("resolution") && !cmd.Flags().Changed("ms") {
			return usagef("apply needs the period to hold: --resolution R (100 ns units, %d..%d here) or --ms X",
				q.Windows.Finest100ns, q.Windows.Coarsest100ns)
		}
		period, err := periodFlag(cmd, o.resolution, o.ms, q.Windows)
		if err != nil {
			return err
		}
		req := timerinfo.Setting{Resolution100ns: period}
		if o.persist {
			return a.persistHolder(q, req, []string{"apply", "--resolution", strconv.FormatUint(uint64(period), 10), "--no-console", "--no-esc", "--as-startup"}, o.dryRun)
		}
		return a.hold(cmd.Context(), host, q, req, o)
	case q.Linux != nil:
		return a.applyLinux(cmd, host, q, o)
	}
	return fmt.Errorf("apply: %w: %s has no timer setting tickscope can hold", seam.ErrUnsupported, runtime.GOOS)
}

func (a *app) applyLinux(cmd *cobra.Command, host seam.Host, q *timerinfo.Report, o *applyOptions) error {
	dmaSet, pidSet, slackSet := cmd.Flags().Changed("dma-latency"), cmd.Flags().Changed("pid"), cmd.Flags().Changed("slack")
	switch {
	case pidSet && !slackSet:
		return usagef("--pid %d needs --slack D: the timer slack to set", o.pid)
	case slackSet && !pidSet:
		return usagef("--slack %v needs --pid PID: apply sets another process's slack (use run --slack for a new program)", o.slack)
	case dmaSet && pidSet:
		return usagef("--dma-latency and --pid: give one setting at a time")
	case !dmaSet && !pidSet:
		return usagef("apply needs a setting: --dma-latency US, or --pid PID --slack D")
	}
	if pidSet {
		if o.pid <= 0 {
			return badFlag("pid", o.pid, "a process id above 0")
		}
		if o.slack < 0 || o.slack > maxSlack {
			return badFlag("slack", o.slack, "allowed 0..1s (0 restores the process's default)")
		}
		for _, flag := range []string{"for", "persist", "no-esc", "as-startup"} {
			if cmd.Flags().Changed(flag) {
				return usagef("--%s %v: setting a process's slack returns at once and holds nothing", flag, cmd.Flags().Lookup(flag).Value)
			}
		}
		return a.setProcessSlack(o)
	}
	if o.dmaLatency < 0 || o.dmaLatency > timerinfo.DMALatencyDefaultUs {
		return badFlag("dma-latency", o.dmaLatency, "allowed 0..%d µs", timerinfo.DMALatencyDefaultUs)
	}
	value := o.dmaLatency
	req := timerinfo.Setting{CPUDMALatencyUs: &value}
	if o.persist {
		return a.persistHolder(q, req, []string{"apply", "--dma-latency", strconv.Itoa(int(value)), "--no-esc", "--as-startup"}, o.dryRun)
	}
	return a.hold(cmd.Context(), host, q, req, o)
}

// setProcessSlack is apply --pid PID --slack D.
func (a *app) setProcessSlack(o *applyOptions) error {
	before, err := platform.ProcessSlack(o.pid)
	if err != nil {
		return err
	}
	if err := platform.SetProcessSlack(o.pid, int64(o.slack)); err != nil {
		return err
	}
	after, err := platform.ProcessSlack(o.pid)
	if err != nil {
		return err
	}
	undo := fmt.Sprintf("tickscope apply --pid %d --slack %dns", o.pid, before)
	if o.asJSON {
		return writeJSON(a.stdout, struct {
			PID           int    `json:"pid"`
			SlackBeforeNs int64  `json:"slack_before_ns"`
			SlackAfterNs  int64  `json:"slack_after_ns"`
			Undo          string `json:"undo"`
		}{o.pid, before, after, undo})
	}
	fmt.Fprintf(a.stdout, "timer slack of process %d (its main thread; threads it starts later inherit it)\n", o.pid)
	fmt.Fprintf(a.stdout, "  before  %v\n  after   %v\n", time.Duration(before), time.Duration(after))
	fmt.Fprintf(a.stdout, "undo: %s\n", undo)
	return nil
}

// hold requests the setting, checks it with a short measurement, and
// holds it until the hold ends.
func (a *app) hold(ctx context.Context, host seam.Host, q *timerinfo.Report, req timerinfo.Setting, o *applyOptions) error {
	if o.asStartup {
		release, err := platform.Lock(seam.HolderLock)
		if err != nil {
			return fmt.Errorf("another startup holder runs: %w", err)
		}
		defer release()
	}
	// The request belongs to the process, but Host.Apply is called from a
	// locked thread as everywhere else.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rep := holdReport{Requested: req, Warnings: []string{}}
	if q.Windows != nil {
		rep.RequestModel = q.Windows.RequestModel
		rep.ThrottlingOptOut = "applied: a hidden or minimised holder keeps its request"
		if err := platform.IgnoreTimerThrottling(); err != nil {
			rep.ThrottlingOptOut = "not available on this build (" + err.Error() + "); before Windows 11 there is no throttling to opt out of"
		}
	}
	granted, release, err := a.holdSetting(host, req)
	if err != nil {
		return err
	}
	defer release()
	rep.Granted = granted
	if q.Linux != nil {
		// The kernel applies the smallest request of all processes: read
		// back what is in force.
		if now, err := host.Query(); err == nil && now.Linux != nil && now.Linux.CPUDMALatencyUs != nil {
			rep.Granted.CPUDMALatencyUs = now.Linux.CPUDMALatencyUs
		}
	}
	if q.Windows != nil && timerinfo.GrantShowsFinerHold(req.Resolution100ns, granted.Resolution100ns) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("granted %s ms, finer than requested: another process holds a finer period", timerinfo.FormatPeriodMS(granted.Resolution100ns)))
	}
	check, err := quickCheck(ctx, host, timerinfo.Setting{})
	if err != nil {
		return err
	}
	rep.Check = check
	if !o.asJSON {
		a.writeHolding(q, &rep, o)
	}
	for _, w := range rep.Warnings {
		a.warnf("%s", w)
	}
	start := time.Now()
	if o.noConsole {
		if err := platform.DetachConsole(); err != nil {
			return err
		}
	}
	rep.EndedBy = a.waitForEnd(ctx, o.holdFor, o.noEsc, o.noConsole)
	rep.HeldNs = int64(time.Since(start))
	if o.asJSON {
		return writeJSON(a.stdout, rep)
	}
	fmt.Fprintf(a.stdout, "released after %v (%s)\n", time.Since(start).Round(time.Millisecond), endedByText[rep.EndedBy])
	return nil
}

// holdSetting requests a setting from the calling (locked) thread; release
// withdraws it, warning when that fails.
func (a *app) holdSetting(host seam.Host, s timerinfo.Setting) (granted timerinfo.Setting, release func(), err error) {
	granted, withdraw, err := host.Apply(s)
	if err != nil {
		return granted, nil, err
	}
	return granted, func() {
		if err := withdraw(); err != nil {
			a.warnf("releasing %s: %v", s, err)
		}
	}, nil
}

var endedByText = map[string]string{
	"for":    "--for elapsed",
	"esc":    "ESC pressed",
	"signal": "interrupted",
}

// quickCheck measures the OS's default wait of 1 ms briefly under setting
// (the zero Setting requests nothing): what a program waiting 1 ms gets.
func quickCheck(ctx context.Context, host seam.Host, setting timerinfo.Setting) (*waitCheck, error) {
	method := host.Methods()[0]
	samples := 200
	if runtime.GOOS == "windows" {
		samples = 50 // at the 15.625 ms default, under a second
	}
	point, err := sample.Measure(ctx, host, sample.Spec{Method: method.Name, Delay: time.Millisecond, Samples: samples, Warmup: 3, Setting: setting}, nil)
	if err != nil {
		return nil, fmt.Errorf("checking %s(1 ms): %w", method.Name, err)
	}
	if len(point.Latencies) == 0 {
		return nil, errors.New("stopped before the check measured anything")
	}
	s := stats.Summarize(point.Latencies)
	return &waitCheck{Method: method.Name, DelayNs: int64(time.Millisecond), Samples: s.Count, P50Ns: s.P50, P99Ns: s.P99}, nil
}

func (a *app) writeHolding(q *timerinfo.Report, rep *holdReport, o *applyOptions) {
	w := a.stdout
	fmt.Fprintln(w, "holding")
	fmt.Fprintf(w, "  requested      %s\n", rep.Requested)
	if q.Windows != nil {
		fmt.Fprintf(w, "  granted        %s\n", rep.Granted)
	} else if rep.Granted.CPUDMALatencyUs != nil {
		fmt.Fprintf(w, "  in force       cpu_dma_latency %d µs (the smallest request of all processes)\n", *rep.Granted.CPUDMALatencyUs)
	}
	c := rep.Check
	fmt.Fprintf(w, "  check          %s 1 ms takes p50 %s ms, p99 %s ms now (%d waits, measured)\n", c.Method, msText(c.P50Ns), msText(c.P99Ns), c.Samples)
	if q.Windows != nil {
		fmt.Fprintf(w, "  request model  %s\n", rep.RequestModel)
		fmt.Fprintf(w, "  reaches        %s\n", q.Windows.Reach())
		fmt.Fprintf(w, "  throttling     %s\n", rep.ThrottlingOptOut)
	} else {
		fmt.Fprintln(w, "  reaches        every CPU's idle-state choice, for as long as tickscope runs")
	}
	fmt.Fprintf(w, "holding until %s\n", untilText(o))
}

// untilText names what ends a hold with these options.
func untilText(o *applyOptions) string {
	var ways []string
	if !o.noEsc {
		if o.noConsole {
			ways = append(ways, "ESC (anywhere on the desktop)")
		} else {
			ways = append(ways, "ESC")
		}
	}
	if !o.noConsole {
		ways = append(ways, "Ctrl+C")
		if runtime.GOOS == "windows" {
			ways = append(ways, "the console closes")
		}
	}
	if o.holdFor > 0 {
		ways = append(ways, o.holdFor.String()+" elapses")
	}
	if len(ways) == 0 {
		return "the process is ended"
	}
	text := ways[0]
	for i, w := range ways[1:] {
		if i == len(ways)-2 {
			text += " or " + w
		} else {
			text += ", " + w
		}
	}
	return text
}

func msText(ns int64) string { return strconv.FormatFloat(float64(ns)/1e6, 'f', 4, 64) }

// waitForEnd blocks, using no CPU, until the hold ends: --for elapses, ESC
// is pressed, or a signal (Ctrl+C, the console closing) cancels ctx.
func (a *app) waitForEnd(ctx context.Context, holdFor time.Duration, noEsc, noConsole bool) string {
	escaped := make(chan struct{})
	var once sync.Once
	stop := func() { once.Do(func() { close(escaped) }) }
	if !noEsc {
		if noConsole {
			restore, err := platform.WatchDesktopEscape(stop)
			if err != nil {
				a.warnf("ESC cannot be watched: %v", err)
			} else {
				defer restore()
			}
		} else {
			defer escape.Watch(stop)()
		}
	}
	var elapsed <-chan time.Time
	if holdFor > 0 {
		t := time.NewTimer(holdFor)
		defer t.Stop()
		elapsed = t.C
	}
	select {
	case <-ctx.Done():
		return "signal"
	case <-escaped:
		return "esc"
	case <-elapsed:
		return "for"
	}
}

// persistHolder registers the startup holder with args, starts it, and
// checks for up to 2 s that the setting appears. With dryRun it prints the
// definition instead and changes nothing.
func (a *app) persistHolder(q *timerinfo.Report, req timerinfo.Setting, args []string, dryRun bool) error {
	st := platform.StartupHolder()
	if st == nil {
		return fmt.Errorf("--persist: %w", seam.ErrUnsupported)
	}
	if q.Windows != nil {
		if !q.Windows.RequestsGlobal() {
			return fmt.Errorf("--persist refused: requests are per-process here (%s), so a holder at logon would speed up only itself; %s", q.Windows.RequestModel, q.Windows.GlobalAdvice())
		}
	} else if !platform.Elevated() {
		return errors.New("--persist installs a systemd system unit and needs root")
	}
	exe, err := os.Executable()
	if err != nil {
		return &seam.OSError{Call: "find this executable", Err: err}
	}
	if temporaryBuild(exe) {
		return fmt.Errorf("--persist refused: %s is a temporary build (go run) that will be deleted; build tickscope with go build or go install and run --persist from that binary", exe)
	}
	if err := refuseForeign(st); err != nil {
		return err
	}
	description := fmt.Sprintf("Holds %s (tickscope %s). Remove with: tickscope startup remove %s", req, args[0], persist.Marker(toolVersion()))
	var definition []byte
	if q.Windows != nil {
		if name := persist.ExpandedByTaskScheduler(exe, os.LookupEnv); name != "" {
			return fmt.Errorf("--persist refused: the path %s contains %%%s%%, which Task Scheduler would expand; move tickscope elsewhere", exe, name)
		}
		definition, err = persist.TaskXML(persist.Task{Exe: exe, Args: args, Description: description, DelaySeconds: startupDelaySeconds})
		if err != nil {
			return err
		}
	} else {
		definition = []byte(persist.SystemdUnit(persist.Unit{Exe: exe, Args: args, Description: description}))
	}
	if dryRun {
		text, err := persist.DefinitionText(definition)
		if err != nil {
			return err
		}
		fmt.Fprint(a.stdout, text)
		return nil
	}
	if err := st.Install(definition); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "installed the %s: it runs %s %s at %s\n", st.Describe(), exe, strings.Join(args, " "), startupWhen(q))
	fmt.Fprintln(a.stdout, "undo: tickscope startup remove")
	if err := st.Start(); err != nil {
		a.warnf("starting it now failed: %v (it will start at the next %s)", err, startupWhen(q))
		return nil
	}
	if pid, ok := awaitHolder(req); ok {
		fmt.Fprintf(a.stdout, "the holder runs (process %d) and the setting is in force\n", pid)
	} else {
		a.warnf("the setting did not appear within 2 s of starting the holder: check with tickscope status")
	}
	return nil
}

// temporaryBuild reports whether exe is go run's build in a temporary
// directory, which a startup holder must not point at.
func temporaryBuild(exe string) bool {
	dir, err := filepath.Rel(os.TempDir(), exe)
	return err == nil && strings.HasPrefix(dir, "go-build")
}

func startupWhen(q *timerinfo.Report) string {
	if q.Windows != nil {
		return fmt.Sprintf("logon (after %d s)", startupDelaySeconds)
	}
	return "boot"
}

// refuseForeign refuses to replace a startup definition tickscope did not
// write.
func refuseForeign(st seam.Startup) error {
	existing, err := st.Read()
	if err != nil || existing == nil {
		return err
	}
	if installed, err := parseInstalled(existing); err != nil || !installed.Ours() {
		return fmt.Errorf("a %s exists that tickscope did not create: it is left alone; delete it by hand with: %s", st.Describe(), st.DeleteByHand())
	}
	return nil
}

// parseInstalled reads a startup definition of this OS.
func parseInstalled(data []byte) (persist.Installed, error) {
	if runtime.GOOS == "windows" {
		return persist.ParseTask(data)
	}
	return persist.ParseUnit(string(data))
}

// awaitHolder waits up to 2 s for the startup holder to run with the
// setting in force.
func awaitHolder(req timerinfo.Setting) (pid int, ok bool) {
	host := machineHost()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pid = platform.HolderRunning()
		if pid == 0 {
			continue
		}
		q, err := host.Query()
		if err != nil {
			continue
		}
		switch {
		case q.Windows != nil && q.Windows.Current100ns <= req.Resolution100ns+10:
			return pid, true
		case q.Linux != nil && q.Linux.CPUDMALatencyUs != nil && req.CPUDMALatencyUs != nil && *q.Linux.CPUDMALatencyUs <= *req.CPUDMALatencyUs:
			return pid, true
		}
	}
	return pid, false
}
