package main

import (
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/escape"
	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/metrics"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/version"
)

func (a *app) applyCommand() *cobra.Command {
	var f hold.ApplyFlags
	var asJSON bool
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
  --persist     register the Task Scheduler task "tickscope" that starts
                tickscope-holder.exe (beside tickscope.exe: the same program
                with no console window) 15 s after your logon, start it, and
                return; undo with tickscope startup remove. Refused unless
                requests are global in the running boot.

Linux: --dma-latency US holds /dev/cpu_dma_latency (root) while tickscope
runs; the kernel drops it when tickscope exits, also when it is killed.
--persist installs the systemd unit tickscope-holder.service instead (root).
--pid PID --slack D sets another process's timer slack through
/proc/PID/timerslack_ns (CAP_SYS_NICE) and returns at once, printing the value
before and after and the command that puts it back.

--json prints the result as JSON when the hold ends (docs/json.md).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return a.apply(cmd, f, asJSON) },
	}
	fl := cmd.Flags()
	fl.Uint32Var(&f.Resolution, "resolution", 0, "Windows: hold this timer period, in 100 ns units")
	fl.Float64Var(&f.MS, "ms", 0, "Windows: hold this timer period, in milliseconds")
	fl.Int32Var(&f.DMALatency, "dma-latency", 0, "Linux: hold /dev/cpu_dma_latency at this many µs (0.."+strconv.Itoa(timerinfo.DMALatencyDefaultUs)+"; root)")
	fl.IntVar(&f.PID, "pid", 0, "Linux: the process whose timer slack --slack sets")
	fl.DurationVar(&f.Slack, "slack", 0, "Linux, with --pid: the timer slack to set (0 restores the process's default, at most 1s)")
	fl.DurationVar(&f.For, "for", 0, "release after this long (default: hold until ESC or Ctrl+C)")
	fl.BoolVar(&f.NoConsole, "no-console", false, "Windows: detach from the console while holding")
	fl.BoolVar(&f.NoEsc, "no-esc", false, "do not watch the ESC key")
	fl.BoolVar(&f.Persist, "persist", false, "start this holder at every logon (Windows) or boot (Linux); undo with tickscope startup remove")
	fl.BoolVar(&f.DryRun, "dry-run", false, "with --persist: print the task or unit it would install, and change nothing")
	fl.BoolVar(&f.AsStartup, "as-startup", false, "hold as the startup holder, which status reports and startup remove ends (the task and unit pass it)")
	fl.StringVar(&f.Listen, "listen", "", "serve the holder's state as Prometheus metrics on ADDR/metrics (PORT or :PORT bind 127.0.0.1)")
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) apply(cmd *cobra.Command, f hold.ApplyFlags, asJSON bool) error {
	host, sys := machineHost(), machineSystem()
	q, err := host.Query()
	if err != nil {
		return err
	}
	if err := options.WindowsOnly(cmd, q, "resolution", "ms", "no-console"); err != nil {
		return err
	}
	if err := options.LinuxOnly(cmd, q, "dma-latency", "pid", "slack"); err != nil {
		return err
	}
	changed := cmd.Flags().Changed
	f.ResolutionSet, f.MSSet, f.DMALatencySet = changed("resolution"), changed("ms"), changed("dma-latency")
	f.PIDSet, f.SlackSet, f.ForSet = changed("pid"), changed("slack"), changed("for")
	plan, err := hold.PlanApply(q, f)
	if err != nil {
		return err
	}
	switch plan.Kind {
	case hold.SetProcessSlack:
		change, err := hold.SetSlack(sys, plan.PID, plan.Slack, func(msg string) { a.warnf("%s", msg) })
		if err != nil {
			return err
		}
		return a.emit(asJSON, change, func(w io.Writer) { report.WriteSlackChange(w, change) })
	case hold.InstallHolder:
		res, err := hold.Persist(host, sys, q, plan.Setting, plan.HolderArgs, hold.PersistOptions{Version: version.String(), DryRun: f.DryRun})
		if err != nil {
			return err
		}
		report.WritePersist(a.stdout, res)
		for _, w := range report.PersistWarnings(res) {
			a.warnf("%s", w)
		}
		return nil
	}
	m, stop, err := metrics.Start("listen", f.Listen, version.String(), func(msg string) { a.warnf("%s", msg) })
	if err != nil {
		return err
	}
	defer stop()
	rep, err := hold.Hold(cmd.Context(), host, sys, q, plan.Setting, hold.HoldOptions{
		For: f.For, NoConsole: f.NoConsole, NoEsc: f.NoEsc, AsStartup: f.AsStartup, Checked: m.HolderChecked,
		WatchEscape: escape.Watch,
		Warn:        func(msg string) { a.warnf("%s", msg) },
		Holding: func(rep *hold.HoldReport) {
			if !asJSON {
				report.WriteHolding(a.stdout, rep)
			}
			for _, w := range rep.Warnings {
				a.warnf("%s", w)
			}
		},
	})
	if err != nil {
		return err
	}
	return a.emit(asJSON, rep, func(w io.Writer) { report.WriteReleased(w, rep) })
}
