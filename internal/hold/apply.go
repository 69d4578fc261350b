package hold

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/internal/waitcheck"
)

// ApplyKind is what an apply does.
type ApplyKind int

const (
	// HoldHere holds the setting in this process until the hold ends.
	HoldHere ApplyKind = iota
	// InstallHolder installs and starts the startup holder (--persist).
	InstallHolder
	// SetProcessSlack sets another process's timer slack and returns.
	SetProcessSlack
	// ServeBoot holds as the boot service, under the service manager.
	ServeBoot
)

// ApplyPlan is what apply will do, once its command line is checked.
type ApplyPlan struct {
	Kind    ApplyKind
	Setting timerinfo.Setting
	// HolderArgs are the startup holder's arguments (InstallHolder).
	HolderArgs []string
	// PID and Slack are the process and its new slack (SetProcessSlack).
	PID   int
	Slack time.Duration
	// While are the programs the setting is held for (--while), nil to
	// hold it throughout; WhileUser, when set (--while-user), the one
	// user whose processes count.
	While     []string
	WhileUser *ProgramUser
}

// ProgramUser is the user whose processes a hold with --while counts
// (--while-user): Name as given, and the user it names: on Linux UID, the
// user id; on Windows SID, the account's security identifier as text
// (UID is then -1).
type ProgramUser struct {
	Name string
	UID  int
	SID  string
}

// lookupAccount reads --while-user on Windows (lookupAccountOS): sid is
// the account's SID as text, problem, when set, why the value names no
// user account here (a usage error), err a lookup that failed. Tests
// replace it.
var lookupAccount = lookupAccountOS

// noSuchAccount is why a --while-user value names no account on Windows.
const noSuchAccount = `no such user here; give a user's name (alice, DOMAIN\alice) or a SID (S-1-5-21-...)`

// windowsProgramUser reads --while-user on Windows: a SID as text
// (S-1-5-21-...: the startup holder is given it), or the name of a user
// account this machine knows (alice, DOMAIN\alice).
func windowsProgramUser(value string) (*ProgramUser, error) {
	sid, problem, err := lookupAccount(value)
	switch {
	case err != nil:
		return nil, fmt.Errorf("--while-user %s: looking the account up: %w", options.Value(value), err)
	case problem != "":
		return nil, options.BadFlag("while-user", value, "%s", problem)
	}
	return &ProgramUser{Name: value, UID: -1, SID: sid}, nil
}

// noUID is (uid_t)-1, which names no user: setreuid and chown read it
// as "leave this id unchanged".
const noUID = 1<<32 - 1

// programUser reads --while-user: a user id (digits: any of uid_t's but
// noUID), or a user's name this machine knows.
func programUser(value string) (*ProgramUser, error) {
	if uid, err := strconv.ParseUint(value, 10, 32); err == nil && uid != noUID {
		return &ProgramUser{Name: value, UID: int(uid)}, nil
	}
	u, err := user.Lookup(value)
	if err != nil {
		return nil, options.BadFlag("while-user", value, "no such user here; give a user's name or a user id (0..4294967294)")
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, options.BadFlag("while-user", value, "the user id %s is not a number; give a user id", u.Uid)
	}
	return &ProgramUser{Name: value, UID: uid}, nil
}

// PlanApply checks apply's command line against this machine and says
// what it will do. Every refusal is a usage error. Flags of the other OS
// are refused before, by the command.
func PlanApply(q *timerinfo.Report, f ApplyFlags) (*ApplyPlan, error) {
	switch {
	case f.ForSet && f.For <= 0:
		return nil, options.BadFlag("for", f.For, "allowed above 0 (leave it out to hold until ESC or Ctrl+C)")
	case f.DryRun && !f.Persist:
		return nil, options.Usagef("--dry-run shows what --persist would install: give --persist too")
	case f.Persist && f.ForSet:
		return nil, options.Usagef("--persist and --for %v: a startup holder holds until it is removed; give one of them", f.For)
	case f.Listen != "" && (f.Persist || f.PIDSet):
		return nil, options.Usagef("--listen %s serves a hold's state while it holds: not with --persist or --pid", options.Value(f.Listen))
	case f.Simulated && (f.Persist || f.Listen != "" || f.NoConsole || f.AsService):
		return nil, options.Usagef("--simulate holds on the model of Windows timers, in this terminal: not with --persist, --listen, --no-console or --as-service, which reach this machine")
	case f.Boot && !f.Persist:
		return nil, options.Usagef("--boot says that --persist installs a service that holds from boot: give --persist too")
	case f.AsService && (f.Persist || f.ForSet || f.Listen != "" || f.AsStartup || f.NoConsole || f.WhileSet):
		return nil, options.Usagef("--as-service is the boot service's own command line (the service manager starts it): not with --persist, --for, --listen, --as-startup, --no-console or --while")
	case f.Boot && f.WhileSet:
		return nil, options.Usagef("--boot and --while %s: the boot service holds from boot; --while is the logon holder's (give --persist --while without --boot)", options.Value(f.While))
	}
	plan := &ApplyPlan{Kind: HoldHere}
	switch {
	case f.Persist:
		plan.Kind = InstallHolder
	case f.AsService:
		plan.Kind = ServeBoot
	}
	if f.WhileSet {
		if q.Linux != nil && (f.PIDSet || f.SlackSet) {
			return nil, options.Usagef("--while and --pid/--slack: a process's timer slack is its own, set once and gone when it exits, with nothing to hold or release; start the program with it instead: tickscope run --slack D -- PROGRAM")
		}
		programs, err := options.Programs("while", f.While, q.Windows != nil)
		if err != nil {
			return nil, err
		}
		plan.While = programs
	}
	if f.WhileUserSet {
		if !f.WhileSet {
			return nil, options.BadFlag("while-user", f.WhileUser, "narrows --while: give --while PROGRAM[,PROGRAM...] too")
		}
		programUser := programUser
		if q.Windows != nil {
			programUser = windowsProgramUser
		}
		u, err := programUser(f.WhileUser)
		if err != nil {
			return nil, err
		}
		plan.WhileUser = u
	}
	switch {
	case q.Windows != nil:
		period, ok, err := options.Period(f.Resolution, f.ResolutionSet, f.MS, f.MSSet, q.Windows)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, options.Usagef("apply needs the period to hold: --resolution R (100 ns units, %d..%d here) or --ms X",
				q.Windows.Finest100ns, q.Windows.Coarsest100ns)
		}
		plan.Setting = timerinfo.Setting{Resolution100ns: period}
		resolution := strconv.FormatUint(uint64(period), 10)
		plan.HolderArgs = withWhile([]string{"holder", "--resolution", resolution, "--no-console", "--no-esc"}, plan.While)
		if plan.WhileUser != nil {
			// The SID, not the name: a name may name another account
			// later (renamed, or a domain's the holder cannot reach at
			// logon).
			plan.HolderArgs = append(plan.HolderArgs, "--while-user", plan.WhileUser.SID)
		}
		if f.Boot {
			// A service has no console and no keyboard: it holds until the
			// service manager stops it.
			plan.HolderArgs = []string{"holder", "--as-service", "--resolution", resolution, "--no-esc"}
		}
		return plan, nil
	case q.Linux != nil:
		return planLinux(plan, f)
	}
	return nil, fmt.Errorf("apply: %w: %s has no timer setting tickscope can hold", seam.ErrUnsupported, q.OS)
}

func planLinux(plan *ApplyPlan, f ApplyFlags) (*ApplyPlan, error) {
	switch {
	case f.Boot:
		return nil, options.Usagef("--boot: on Linux the systemd unit --persist installs starts at boot already; give --persist alone")
	case f.PIDSet && !f.SlackSet:
		return nil, options.Usagef("--pid %d needs --slack D: the timer slack to set", f.PID)
	case f.SlackSet && !f.PIDSet:
		return nil, options.Usagef("--slack %v needs --pid PID: apply sets another process's slack (use run --slack for a new program)", f.Slack)
	case f.DMALatencySet && f.PIDSet:
		return nil, options.Usagef("--dma-latency and --pid: give one setting at a time")
	case !f.DMALatencySet && !f.PIDSet:
		return nil, options.Usagef("apply needs a setting: --dma-latency US, or --pid PID --slack D")
	}
	if f.PIDSet {
		if f.PID <= 0 {
			return nil, options.BadFlag("pid", f.PID, "a process id above 0")
		}
		if err := options.Slack("slack", f.Slack, true); err != nil {
			return nil, err
		}
		for _, given := range []struct {
			flag  string
			value any
			set   bool
		}{{"for", f.For, f.ForSet}, {"persist", f.Persist, f.Persist}, {"no-esc", f.NoEsc, f.NoEsc}, {"as-startup", f.AsStartup, f.AsStartup}} {
			if given.set {
				return nil, options.Usagef("--%s %v: setting a process's slack returns at once and holds nothing", given.flag, given.value)
			}
		}
		return &ApplyPlan{Kind: SetProcessSlack, PID: f.PID, Slack: f.Slack}, nil
	}
	if err := options.DMALatency("dma-latency", f.DMALatency); err != nil {
		return nil, err
	}
	value := f.DMALatency
	plan.Setting = timerinfo.Setting{CPUDMALatencyUs: &value}
	plan.HolderArgs = withWhile([]string{"holder", "--dma-latency", strconv.Itoa(int(value)), "--no-esc"}, plan.While)
	if plan.WhileUser != nil {
		// The user id, not the name: the holder starts at boot, maybe
		// before the user database (LDAP, sssd) answers, and the user the
		// name named now is the one whose processes count, whatever the
		// name names later.
		plan.HolderArgs = append(plan.HolderArgs, "--while-user", strconv.FormatUint(uint64(uint32(plan.WhileUser.UID)), 10))
	}
	return plan, nil
}

// withWhile adds --while to the startup holder's arguments, when given.
func withWhile(args, programs []string) []string {
	if len(programs) == 0 {
		return args
	}
	return append(args, "--while", strings.Join(programs, ","))
}

// SlackChange is what apply --pid PID --slack D prints as JSON.
type SlackChange struct {
	PID           int    `json:"pid"`
	SlackBeforeNs int64  `json:"slack_before_ns"`
	SlackAfterNs  int64  `json:"slack_after_ns"`
	Undo          string `json:"undo"`
}

// SetSlack sets another process's timer slack and reads it back, with the
// command that puts the old value back. A kernel thread is refused (usage
// error): its slack is the kernel's (kthreadd's, pid 2, is inherited by
// every kernel thread it starts). PID 1, init, is set with a warning: every
// process it starts from then on inherits the slack.
func SetSlack(sys seam.Processes, pid int, slack time.Duration, warn func(string)) (*SlackChange, error) {
	process, err := sys.DescribeProcess(pid)
	if err != nil {
		return nil, err
	}
	if process.KernelThread {
		return nil, options.BadFlag("pid", pid, "process %d (%s) is a kernel thread: its timer slack is the kernel's; give a user process", pid, options.Value(process.Name))
	}
	if pid == 1 && warn != nil {
		warn(fmt.Sprintf("process 1 (%s) is init: every process it starts from now on inherits this slack", options.Value(process.Name)))
	}
	before, err := sys.ProcessSlack(pid)
	if err != nil {
		return nil, err
	}
	if err := sys.SetProcessSlack(pid, int64(slack)); err != nil {
		return nil, err
	}
	after, err := sys.ProcessSlack(pid)
	if err != nil {
		return nil, err
	}
	return &SlackChange{PID: pid, SlackBeforeNs: before, SlackAfterNs: after,
		Undo: fmt.Sprintf("tickscope apply --pid %d --slack %dns", pid, before)}, nil
}

// HoldReport is what apply prints as JSON when the hold ends.
type HoldReport struct {
	Requested timerinfo.Setting `json:"requested"`
	Granted   timerinfo.Setting `json:"granted"`
	// Check is a short measurement of the default wait with the setting in
	// force: Windows can report success and ignore a request.
	Check            *waitcheck.Check `json:"check,omitempty"`
	RequestModel     string           `json:"request_model,omitempty"`
	ThrottlingOptOut string           `json:"throttling_opt_out,omitempty"`
	HeldNs           int64            `json:"held_ns"`
	// Reapplies counts the times the setting was found lost (a check every
	// RecheckEvery and after each resume from sleep) and applied again.
	Reapplies int `json:"reapplies"`
	// EndedBy is "for", "esc" or "signal" (Ctrl+C, the console closing, or
	// a termination request).
	EndedBy  string   `json:"ended_by"`
	Warnings []string `json:"warnings"`
	// Simulated marks a hold on the model of Windows timers.
	Simulated bool `json:"simulated,omitempty"`
	// While is what a hold with --while did (nil without it).
	While *WhileReport `json:"while,omitempty"`

	// For the text: whom a Windows request reaches ("" elsewhere), and what
	// ends the hold.
	Reach string `json:"-"`
	Until string `json:"-"`
}

// The throttling opt-out as apply reports it.
const (
	ThrottlingApplied = "applied: a hidden or minimised holder keeps its request"
	throttlingMissing = "not available on this build (%v); before Windows 11 there is no throttling to opt out of"
)

// HoldOptions are how a hold ends and what it reports on the way.
type HoldOptions struct {
	For       time.Duration
	NoConsole bool
	NoEsc     bool
	// AsStartup holds as the startup holder (seam.HolderLock).
	AsStartup bool
	// WatchEscape watches the terminal's ESC key (package term) and
	// returns its restore.
	WatchEscape func(stop func()) (restore func())
	// Warn reports what goes wrong without ending the hold.
	Warn func(string)
	// Holding is called once the setting is held and checked, before the
	// hold waits.
	Holding func(*HoldReport)
	// Checked is told the timer state at each check of the hold (the first
	// once the setting is held), what the holder holds (its request, not
	// the grant, which on Windows is the machine's period, finer when
	// another process holds finer), and whether the setting had been lost
	// and was applied again (apply --listen's metrics).
	Checked func(q *timerinfo.Report, held timerinfo.Setting, reapplied bool)
	// RecheckEvery is how often the hold checks its setting (0:
	// RecheckEvery), on NewTicker (nil: time.NewTicker), which a test
	// replaces.
	RecheckEvery time.Duration
	NewTicker    func(time.Duration) (tick <-chan time.Time, stop func())

	// While holds the setting only while one of these programs runs
	// (options.Programs checked them), looked for every timerstate.ScanEvery (0:
	// timerstate.ScanEvery): nil holds it throughout. Such a hold calls Waiting
	// once, when it starts to watch with nothing held, instead of Holding, and
	// Changed at each start and exit of a program, and when a take that had failed
	// succeeds (EventRetried), with the event; Checked is called only while the
	// setting is held.
	While []string
	// WhileUser, when set, counts only the processes of that user
	// (--while-user).
	WhileUser *ProgramUser
	ScanEvery time.Duration
	Waiting   func(*HoldReport)
	Changed   func(WhileState, *ProgramEvent)
}

// The parts of the OS hold's actions use (seam.System, which package
// platform implements and package sim fakes, has them all).
type (
	// System is what a hold reads and changes besides the timer: the
	// holder lock, the opt-out of Windows 11's throttling, the console
	// and the desktop's ESC, the machine's sleeps, and the programs of
	// --while.
	System interface {
		seam.Locker
		seam.Throttling
		seam.Desktop
		seam.Power
		seam.Programs
	}
	// ServiceSystem is what the boot service's hold uses: a hold's, run
	// under the service manager.
	ServiceSystem interface {
		System
		seam.ServiceRunner
	}
)

// Hold requests the setting, checks it with a short measurement, and holds
// it, using no CPU, until --for elapses, ESC is pressed, or ctx ends (a
// signal).
func Hold(ctx context.Context, host seam.Host, sys System, q *timerinfo.Report, req timerinfo.Setting, o HoldOptions) (*HoldReport, error) {
	if o.AsStartup {
		release, err := sys.Lock(seam.HolderLock)
		if err != nil {
			return nil, fmt.Errorf("another startup holder runs: %w", err)
		}
		defer release()
	}
	// The request belongs to the process, but Host.Apply is called from a
	// locked thread as everywhere else.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	rep := &HoldReport{Requested: req, Warnings: []string{}, Until: UntilText(q, o.For, o.NoEsc, o.NoConsole), Simulated: q.Arch == "simulated"}
	if q.Windows != nil {
		rep.RequestModel, rep.Reach = q.Windows.RequestModel, q.Windows.Reach()
		rep.ThrottlingOptOut = ThrottlingApplied
		if err := sys.IgnoreTimerThrottling(); err != nil {
			rep.ThrottlingOptOut = fmt.Sprintf(throttlingMissing, err)
		}
	}
	if len(o.While) > 0 {
		return holdWhile(ctx, host, sys, q, req, o, rep)
	}
	// What goes wrong once the hold has begun is told at once and kept
	// for the report.
	o.Warn = rep.warner(o.Warn)
	granted, release, warnings, err := grant(host, q, req, o.Warn)
	if err != nil {
		return nil, err
	}
	k := &keeper{host: host, req: req, granted: granted, target: keepTarget(req, granted), release: release, o: o}
	defer func() { k.release() }()
	rep.Granted = granted
	rep.Warnings = append(rep.Warnings, warnings...)
	if rep.Check, err = waitcheck.Measure(ctx, host, q, timerinfo.Setting{}); err != nil {
		return nil, err
	}
	if o.Checked != nil {
		if now, err := host.Query(); err == nil {
			o.Checked(now, req, false)
		}
	}
	// The time held counts from before --for is armed, so that a hold
	// of --for D reports at least D (Holding may take a while: it prints).
	start := time.Now()
	end := armEnd(ctx, sys, o, rep, 0)
	defer end.close()
	if o.Holding != nil {
		o.Holding(rep)
	}
	if o.NoConsole {
		if err := sys.DetachConsole(); err != nil {
			return nil, err
		}
	}
	rep.EndedBy = end.wait(k.check, nil)
	rep.HeldNs = int64(time.Since(start))
	rep.Reapplies = k.reapplies
	return rep, nil
}

// grant requests req from the calling (locked) thread (holdSetting) and
// reads back what is granted: on Linux the kernel applies the smallest
// cpu_dma_latency request of all processes, so the grant is what is in
// force. warnings are what the hold's report says of the grant: on
// Windows, a period finer than requested (another process holds one).
func grant(host seam.Host, q *timerinfo.Report, req timerinfo.Setting, warn func(string)) (granted timerinfo.Setting, release func(), warnings []string, err error) {
	granted, release, err = holdSetting(host, req, warn)
	if err != nil {
		return granted, nil, nil, err
	}
	if q.Linux != nil {
		if now, err := host.Query(); err == nil && now.Linux != nil && now.Linux.CPUDMALatencyUs != nil {
			granted.CPUDMALatencyUs = now.Linux.CPUDMALatencyUs
		}
	}
	if q.Windows != nil && timerinfo.GrantShowsFinerHold(req.Resolution100ns, granted.Resolution100ns) {
		warnings = append(warnings, fmt.Sprintf("granted %s ms, finer than requested: another process holds a finer period", timerinfo.FormatPeriodMS(granted.Resolution100ns)))
	}
	return granted, release, warnings, nil
}

// maxWarnings bounds the warnings a hold keeps for its report, as
// maxEvents bounds its events: a startup holder runs for months.
const maxWarnings = 100

// warner returns a warn that tells warn (at once) and keeps the warning in
// the report (its Warnings, the last maxWarnings, a warning already kept
// not kept twice), so that --json says what the text said.
func (rep *HoldReport) warner(warn func(string)) func(string) {
	return func(msg string) {
		if !slices.Contains(rep.Warnings, msg) {
			if len(rep.Warnings) == maxWarnings {
				rep.Warnings = append(rep.Warnings[:0], rep.Warnings[1:]...)
			}
			rep.Warnings = append(rep.Warnings, msg)
		}
		if warn != nil {
			warn(msg)
		}
	}
}

// endWatch is what a hold waits on until it ends: --for, ESC, the recheck
// and scan tickers, and the resume notification. It is armed (armEnd)
// before the hold says it holds or waits (Holding, Waiting), so that
// nothing which happens once the caller was told is missed: a resume
// just after Holding would otherwise find no watcher registered.
type endWatch struct {
	ctx       context.Context
	sys       seam.Power
	escaped   chan struct{}
	elapsed   <-chan time.Time
	recheck   <-chan time.Time
	scanTick  <-chan time.Time
	stopScan  func()
	newTicker func(time.Duration) (<-chan time.Time, func())
	// announced receives when an event source gathered announcements
	// (nil: none), and onAnnounced takes them; settled, when set, is the
	// channel of the timer that lets announcements settle before a scan
	// (nil while none runs), and onSettled scans. A hold with --while
	// sets them (whileHold).
	announced   <-chan struct{}
	onAnnounced func()
	settled     func() <-chan time.Time
	onSettled   func()
	resumed     chan struct{}
	slept       time.Duration
	sleptKnown  bool
	closers     []func()
}

// armEnd arms the hold's end: ESC, --for, the recheck every RecheckEvery,
// a scan every scanEvery when scanEvery > 0, and the resume notification.
// What cannot be armed is kept in rep's warnings, not told: it is armed
// before Holding or Waiting, which tell the report's warnings after the
// holding line, so told here it would be told twice. close disarms it.
func armEnd(ctx context.Context, sys System, o HoldOptions, rep *HoldReport, scanEvery time.Duration) *endWatch {
	o.Warn = rep.warner(nil)
	w := &endWatch{ctx: ctx, sys: sys, escaped: make(chan struct{}), resumed: make(chan struct{}, 1)}
	var once sync.Once
	stop := func() { once.Do(func() { close(w.escaped) }) }
	switch {
	case o.NoEsc:
	case o.NoConsole:
		restore, err := sys.WatchDesktopEscape(stop)
		if err != nil {
			if o.Warn != nil {
				o.Warn(fmt.Sprintf("ESC cannot be watched: %v", err))
			}
		} else {
			w.closers = append(w.closers, restore)
		}
	case o.WatchEscape != nil:
		w.closers = append(w.closers, o.WatchEscape(stop))
	}
	if o.For > 0 {
		t := time.NewTimer(o.For)
		w.closers = append(w.closers, func() { t.Stop() })
		w.elapsed = t.C
	}
	every, newTicker := o.RecheckEvery, o.NewTicker
	if every <= 0 {
		every = RecheckEvery
	}
	if newTicker == nil {
		newTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	var stopRecheck func()
	w.recheck, stopRecheck = newTicker(every)
	w.closers = append(w.closers, stopRecheck)
	w.newTicker = newTicker
	if scanEvery > 0 {
		w.rescan(scanEvery)
		w.closers = append(w.closers, func() { w.stopScan() })
	}
	// A resume notification (Windows) arrives on a goroutine of the OS's;
	// the check runs on the thread that waits, which holds.
	if stopWatch, err := sys.WatchResume(func() {
		select {
		case w.resumed <- struct{}{}:
		default:
		}
	}); err == nil {
		w.closers = append(w.closers, stopWatch)
	} else if !errors.Is(err, seam.ErrUnsupported) && o.Warn != nil {
		o.Warn(fmt.Sprintf("no resume notification (%v): the setting is checked every %v only", err, every))
	}
	w.slept, w.sleptKnown = sys.SleptFor()
	return w
}

// rescan scans every scanEvery from now on, in place of the scan armed
// before.
func (w *endWatch) rescan(scanEvery time.Duration) {
	if w.stopScan != nil {
		w.stopScan()
	}
	w.scanTick, w.stopScan = w.newTicker(scanEvery)
}

// close disarms the watch, last armed first.
func (w *endWatch) close() {
	for i := len(w.closers) - 1; i >= 0; i-- {
		w.closers[i]()
	}
	w.closers = nil
}

// wait blocks until the hold ends: --for elapses, ESC is pressed, or a
// signal (Ctrl+C, the console closing) cancels ctx, and says which.
// Meanwhile it calls check at each recheck and after each resume from
// sleep (with why, "" for the periodic check), and scan at each scan
// tick, and what an event source announced (announced, settled);
// between them it uses no CPU.
func (w *endWatch) wait(check func(reason string), scan func()) string {
	for {
		var settled <-chan time.Time
		if w.settled != nil {
			settled = w.settled()
		}
		select {
		case <-w.announced:
			w.onAnnounced()
		case <-settled:
			w.onSettled()
		case <-w.ctx.Done():
			return "signal"
		case <-w.escaped:
			return "esc"
		case <-w.elapsed:
			return "for"
		case <-w.recheck:
			// Linux sends no resume notification: the time suspended, which
			// only CLOCK_BOOTTIME counts, grew since the last check.
			reason := ""
			if now, ok := w.sys.SleptFor(); ok && w.sleptKnown && now-w.slept >= time.Second {
				reason = fmt.Sprintf("after a resume from sleep (%v asleep)", (now - w.slept).Round(time.Second))
				w.slept = now
			}
			check(reason)
		case <-w.resumed:
			check("after a resume from sleep")
		case <-w.scanTick:
			scan()
		}
	}
}

// RecheckEvery is how often a hold checks that its setting is still in
// force: a Windows request can be dropped (Windows 11 ignores a hidden
// process's request without the throttling opt-out; users report the
// period changing after long uptimes), and a few seconds without it is
// what a user would notice only by measuring.
const RecheckEvery = 5 * time.Second

// keeper holds the setting: the request, what was granted, and how to
// release it, replaced at each re-apply.
type keeper struct {
	host    seam.Host
	req     timerinfo.Setting
	granted timerinfo.Setting
	// target is what a check compares the timer with (keepTarget): what
	// the hold had at its start, not the request, which the OS may never
	// have granted.
	target  timerinfo.Setting
	release func()
	o       HoldOptions
	// stuck is the state (heldNow) a re-apply did not restore, "" when
	// none: while the timer stays in it, the setting is not applied again
	// and nothing more is logged.
	stuck     string
	reapplies int
}

// keepTarget is what a hold keeps: the coarser of the request and what
// was granted at the start. A grant coarser than the request (the OS
// rounding, or Windows 11 ignoring a hidden holder whose opt-out failed)
// cannot be bettered by applying again; a grant finer than it is another
// process's request, which is not the holder's to keep.
func keepTarget(req, granted timerinfo.Setting) timerinfo.Setting {
	t := req
	t.Resolution100ns = max(req.Resolution100ns, granted.Resolution100ns)
	if req.CPUDMALatencyUs != nil && granted.CPUDMALatencyUs != nil && *granted.CPUDMALatencyUs > *req.CPUDMALatencyUs {
		t.CPUDMALatencyUs = granted.CPUDMALatencyUs
	}
	return t
}

// check reads the timer state and applies the setting again if what the
// hold had at its start is no longer in force, saying so through Warn
// (the holder's stderr or log). A re-apply that does not restore it is
// said once, and not tried again until the timer state changes or the
// machine resumes: otherwise a holder the OS ignores would release,
// request and log every check, for as long as it runs. reason says why it
// checks now, "" for the periodic check.
func (k *keeper) check(reason string) {
	q, err := k.host.Query()
	if err != nil {
		k.warn(fmt.Sprintf("checking the held setting%s: %v", suffix(reason), err))
		return
	}
	was := heldNow(q)
	if timerstate.InForce(q, k.target) || (reason == "" && was == k.stuck) {
		if k.stuck != was {
			k.stuck = ""
		}
		if k.o.Checked != nil {
			k.o.Checked(q, k.req, false)
		}
		return
	}
	k.release()
	granted, release, err := holdSetting(k.host, k.req, nil)
	if err != nil {
		k.release, k.stuck = func() {}, was
		k.warn(fmt.Sprintf("the held setting %s was lost%s (%s now) and applying it again failed: %v; not tried again until the timer state changes", k.req, suffix(reason), was, err))
		return
	}
	k.granted, k.release = granted, release
	k.reapplies++
	if after, err := k.host.Query(); err == nil {
		q = after
		if q.Linux != nil && q.Linux.CPUDMALatencyUs != nil {
			k.granted.CPUDMALatencyUs = q.Linux.CPUDMALatencyUs
		}
	}
	if timerstate.InForce(q, k.target) {
		k.stuck = ""
		k.warn(fmt.Sprintf("the held setting %s was lost%s (%s now): applied it again (re-apply %d; %s now)", k.req, suffix(reason), was, k.reapplies, heldNow(q)))
	} else {
		k.stuck = heldNow(q)
		k.warn(fmt.Sprintf("the held setting %s was lost%s (%s now): applied it again (re-apply %d), but %s is in force: the OS does not honour the request now; not applied again until the timer state changes", k.req, suffix(reason), was, k.reapplies, k.stuck))
	}
	if k.o.Checked != nil {
		k.o.Checked(q, k.req, true)
	}
}

func (k *keeper) warn(msg string) {
	if k.o.Warn != nil {
		k.o.Warn(msg)
	}
}

func suffix(reason string) string {
	if reason == "" {
		return ""
	}
	return " " + reason
}

// heldNow says what is in force, for the re-apply message.
func heldNow(q *timerinfo.Report) string {
	switch {
	case q.Windows != nil:
		return "current period " + timerinfo.FormatPeriodMS(q.Windows.Current100ns) + " ms"
	case q.Linux != nil && q.Linux.CPUDMALatencyUs != nil:
		return fmt.Sprintf("cpu_dma_latency %d µs", *q.Linux.CPUDMALatencyUs)
	}
	return "unknown"
}

// EndedByText says in words what ended a hold.
var EndedByText = map[string]string{
	"for":     "--for elapsed",
	"esc":     "ESC pressed",
	"signal":  "interrupted",
	EndedByUI: "released in tickscope ui",
}

// EndedByUI ends a hold tickscope ui made (Release, or ui quitting); apply
// never reports it.
const EndedByUI = "ui"

// UntilText names what ends a hold with these options. On Windows the
// console closing ends it too.
func UntilText(q *timerinfo.Report, holdFor time.Duration, noEsc, noConsole bool) string {
	var ways []string
	if !noEsc {
		if noConsole {
			ways = append(ways, "ESC (anywhere on the desktop)")
		} else {
			ways = append(ways, "ESC")
		}
	}
	if !noConsole {
		ways = append(ways, "Ctrl+C")
		if q.Windows != nil {
			ways = append(ways, "the console closes")
		}
	}
	if holdFor > 0 {
		ways = append(ways, holdFor.String()+" elapses")
	}
	switch len(ways) {
	case 0:
		return "the process is ended"
	case 1:
		return ways[0]
	}
	return strings.Join(ways[:len(ways)-1], ", ") + " or " + ways[len(ways)-1]
}
