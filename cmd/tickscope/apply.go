package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/metrics"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/startup"
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
		Long:    applyHelp,
		Example: `  # Windows: hold 0.5 ms (5000 x 100 ns) until ESC or Ctrl+C
  tickscope apply --resolution 5000
  # Windows: the same at every logon, only while game.exe runs
  tickscope apply --ms 0.5 --persist --while game.exe
  # Linux: keep every CPU out of deep idle for an hour (root)
  tickscope apply --dma-latency 0 --for 1h
  # Linux: set another process's timer slack to 50 µs
  tickscope apply --pid 4242 --slack 50us
  # on the model of Windows timers, changing nothing here
  tickscope apply --simulate game-session --ms 0.5 --while game.exe`,
		Args: noArgs,
	}
	var simulation sim.Choice
	a.onHost(cmd, &simulation, "with --simulate: the model's random seed", func(cmd *cobra.Command, host seam.Host) error {
		sys := machineSystem()
		if model, ok := host.(seam.Simulated); ok {
			host, sys = model.RealTime()
			f.Simulated = true
			if !asJSON {
				a.stdout = report.SimulatedWriter(a.stdout, simulation.Scenario)
			}
		}
		return a.apply(cmd, host, sys, f, asJSON)
	})
	fl := cmd.Flags()
	registerApply(fl, &f)
	fl.BoolVar(&asJSON, "json", false, "print the result as JSON (docs/json.md)")
	return cmd
}

func (a *app) apply(cmd *cobra.Command, host seam.Host, sys seam.System, f hold.ApplyFlags, asJSON bool) error {
	q, err := host.Query()
	if err != nil {
		return err
	}
	if err := hold.CheckApply(q, f); err != nil {
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
		res, err := startup.Persist(host, sys, q, p.Setting, p.HolderArgs, startup.PersistOptions{Version: version.String(), DryRun: f.DryRun, While: p.While, Boot: f.Boot})
		if err != nil {
			return err
		}
		startup.WritePersist(a.stdout, res)
		for _, w := range startup.PersistWarnings(res) {
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

// applyHelp is apply's --help: what it holds on each OS, and how --persist,
// --boot and --while change when it holds.
const applyHelp = `Hold a timer setting, say what the OS granted and what a wait takes now, and
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
BENCHMARKS.md gives; on Linux, where the kernel announces each program start
and exit (its process events: outside a container, root before Linux 6.6), it
looks within milliseconds of each start of one of them (within about a second
while other programs keep starting), at most 4 times a second, and every 10 s.
The waiting line and status say which. With --persist the startup holder does
the same. Not with --slack: a process's slack is its own; use run --slack.

--simulate SCENARIO holds on the model of Windows timers instead (its
game-session scenario runs game.exe twice), changing nothing on this machine.

--json prints the result as JSON when the hold ends (docs/json.md).`
