package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/measure"
	"github.com/tickscope/tickscope/internal/metrics"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/term"
	"github.com/tickscope/tickscope/internal/version"
)

func (a *app) applyCommand() *cobra.Command {
	var f hold.ApplyFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "apply",
		Aliases: []string{"hold"},
		Short:   "Hold a timer setting until ESC, Ctrl+C or --for, then release it",
		Long:    hold.ApplyHelp,
		Args:    noArgs,
	}
	var simulation measure.Simulation
	a.onHost(cmd, &simulation, "with --simulate: the model's random seed", func(cmd *cobra.Command, host seam.Host) error {
		sys := machineSystem()
		if model, ok := host.(*sim.Host); ok {
			paced := sim.NewPaced(model)
			host, sys, f.Simulated = paced, measure.SimulatedSystem(paced), true
			if !asJSON {
				a.stdout = report.SimulatedWriter(a.stdout, simulation.Scenario)
			}
		}
		return a.apply(cmd, host, sys, f, asJSON)
	})
	fl := cmd.Flags()
	hold.RegisterApply(fl, &f)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) apply(cmd *cobra.Command, host seam.Host, sys seam.System, f hold.ApplyFlags, asJSON bool) error {
	q, err := host.Query()
	if err != nil {
		return err
	}
	if err := hold.CheckApply(cmd, q, &f); err != nil {
		return err
	}
	p, err := hold.PlanApply(q, f)
	if err != nil {
		return err
	}
	warn := func(msg string) { a.warnf("%s", msg) }
	if f.Simulated {
		warn = func(msg string) { a.warnf("%s%s", report.SimulatedLabel, msg) }
	}
	switch p.Kind {
	case hold.SetProcessSlack:
		change, err := hold.SetSlack(sys, p.PID, p.Slack, func(msg string) { a.warnf("%s", msg) })
		if err != nil {
			return err
		}
		return a.emit(asJSON, change, func(w io.Writer) { hold.WriteSlackChange(w, change) })
	case hold.InstallHolder:
		res, err := hold.Persist(host, sys, q, p.Setting, p.HolderArgs, hold.PersistOptions{Version: version.String(), DryRun: f.DryRun, While: p.While, Boot: f.Boot})
		if err != nil {
			return err
		}
		hold.WritePersist(a.stdout, res)
		for _, w := range hold.PersistWarnings(res) {
			a.warnf("%s", w)
		}
		return nil
	case hold.ServeBoot:
		return hold.HoldAsService(host, sys, p.Setting)
	}
	m, stop, err := metrics.Start("listen", f.Listen, version.String(), func(msg string) { a.warnf("%s", msg) })
	if err != nil {
		return err
	}
	defer stop()
	rep, err := hold.Hold(cmd.Context(), host, sys, q, p.Setting, hold.HoldOptions{
		For: f.For, NoConsole: f.NoConsole, NoEsc: f.NoEsc, AsStartup: f.AsStartup, Checked: m.HolderChecked,
		WatchEscape: term.WatchEscape,
		Warn:        warn,
		Holding: func(rep *hold.HoldReport) {
			if !asJSON {
				hold.WriteHolding(a.stdout, rep)
			}
			for _, w := range rep.Warnings {
				warn(w)
			}
		},
		While:     p.While,
		WhileUser: p.WhileUser,
		Waiting: func(rep *hold.HoldReport) {
			if !asJSON {
				hold.WriteWaiting(a.stdout, rep)
			}
			for _, w := range rep.Warnings {
				warn(w)
			}
			m.HolderWhile(hold.WhileState{Programs: p.While}, p.Setting)
		},
		Changed: func(state hold.WhileState, e *hold.ProgramEvent) {
			if !asJSON && e != nil {
				hold.WriteProgramEvent(a.stdout, state, e)
			}
			m.HolderWhile(state, p.Setting)
		},
	})
	if err != nil {
		return err
	}
	return a.emit(asJSON, rep, func(w io.Writer) { hold.WriteReleased(w, rep) })
}
