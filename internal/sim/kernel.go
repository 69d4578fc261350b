package sim

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/tickscope/tickscope/internal/etwkernel"
)

// Kernel is the model's kernel session: the events a kernel ETW session
// (DPC, ISR, CSwitch, ReadyThread, Image) would have logged while the
// model's Sleeps ran, already decoded, on the model's clock (ns), and the
// model's own account of what delayed each wait (Truth), so that explain's
// Windows path runs on any OS against a known answer.
//
// What it models, per Sleep of the measuring thread (all on processor 0):
//   - the thread switching out to the idle thread as it starts waiting;
//   - the clock interrupt on every tick of the model from the first at or
//     after the deadline to the one the wait ended on (ClockInterrupts:
//     the clock interrupt's own event has no documented layout, so the
//     ticks are given apart, as a checked source, never as an event);
//   - after that tick, a burst of ISRs and DPCs of the scenario's drivers
//     now and then, each driver's routine inside its image (loaded in the
//     image rundown at the session's start);
//   - the expired timer's processing, 1 to 2 µs, and the thread's
//     ReadyThread;
//   - another thread switched in at the tick now and then, which runs
//     until the measuring thread's CSwitch in (the model's own rare
//     preemption, Scenario.PreemptProb, is told this way too); otherwise
//     the switch in comes from the idle thread, at the ready, from C0.
//
// What it does not model: a clock interrupt that comes late, a deep idle
// state's exit, a ready on another processor, page faults, DPCs on other
// processors or between waits, the time the ISR of the clock itself
// takes, and event loss. The model's extra tick (a wait ending one tick
// later than it should) and its suspend are told as time from the clock
// interrupt to the ready, which is what the events would show; the time
// from the switch in to the thread's next call (the scenario's call
// delay) has no event, and is what the attribution leaves unexplained.
// The draws of the interference come from a stream of their own, so the
// model's waits before it are those of the same scenario and seed.
type Kernel struct {
	sc     KernelScenario
	rng    *rand.Rand
	events []etwkernel.Event
	clock  []int64
	truth  []Truth
	period int64
}

// Truth is what delayed one wait, by the model's own account (ns).
type Truth struct {
	// Start is when the wait began, Due its deadline; Switch is when the
	// measuring thread was switched in (the wait returns a call delay
	// later).
	Start, Due, Switch int64
	// AllowedNs is from the deadline to the first tick at or after it:
	// the tick's part.
	AllowedNs int64
	// ClockToReadyNs is from that tick's clock interrupt to the ready,
	// less the ISR and DPC time inside it: an extra tick, a suspend and
	// the timer's expiry.
	ClockToReadyNs int64
	// ISRNs and DPCNs are each driver image's time, by its file name.
	ISRNs, DPCNs map[string]int64
	// OtherNs is another thread's run while the measuring thread was
	// ready, OtherTID that thread.
	OtherNs  int64
	OtherTID uint32
}

// KernelScenario is a scenario of the model with the kernel's
// interference: explain --simulate's.
type KernelScenario struct {
	Scenario
	// Drivers are the drivers whose ISRs and DPCs run after a tick now
	// and then.
	Drivers []Driver
	// OtherProb is the chance that another thread (OtherTID, at
	// OtherPriority) is switched in at the tick and runs OtherMinNs to
	// OtherMaxNs before the measuring thread.
	OtherProb              float64
	OtherMinNs, OtherMaxNs int64
}

// Driver is one driver's interference: with Prob per wait, a burst of 1
// to Burst executions, each an ISR of ISRMinNs to ISRMaxNs (none when
// ISRMaxNs is 0) followed by a DPC of DPCMinNs to DPCMaxNs.
type Driver struct {
	Image              string
	Prob               float64
	Burst              int
	ISRMinNs, ISRMaxNs int64
	DPCMinNs, DPCMaxNs int64
}

// The model's threads and the drivers' images.
const (
	// KernelTID is the measuring thread's id on the model; OtherTID the
	// other thread's, at OtherPriority.
	KernelTID     = 4444
	OtherTID      = 7312
	OtherPriority = 15
	// measuringPriority is the measuring thread's priority.
	measuringPriority = 8
	// driverBase is where the first driver image is loaded; each takes
	// driverSize, its routine at routineOffset into it.
	driverBase    = 0xfffff80412340000
	driverSize    = 0x100000
	routineOffset = 0x1a2b0
)

// kernelScenarios are explain --simulate's own: the machines of the
// model's scenarios with drivers' interference.
var kernelScenarios = []KernelScenario{
	{
		Scenario: withName(mustFind("knee-26100"), "dpc-storm",
			"knee-26100's machine with storport.sys DPC bursts (one wait in 20, up to 4 DPCs of 80-400 us), ndis.sys ISR and DPC (one in 30) and another thread of priority 15 (one in 50, 0.2-1.5 ms) after the tick (explain)"),
		Drivers: []Driver{
			{Image: "storport.sys", Prob: 0.05, Burst: 4, DPCMinNs: 80 * us, DPCMaxNs: 400 * us},
			{Image: "ndis.sys", Prob: 1.0 / 30, Burst: 2, ISRMinNs: 5 * us, ISRMaxNs: 30 * us, DPCMinNs: 50 * us, DPCMaxNs: 250 * us},
		},
		OtherProb: 0.02, OtherMinNs: 200 * us, OtherMaxNs: 1500 * us,
	},
}

func mustFind(name string) Scenario {
	sc, ok := Find(name)
	if !ok {
		panic("sim: no scenario " + name)
	}
	return sc
}

func withName(sc Scenario, name, summary string) Scenario {
	sc.Name, sc.Summary = name, summary
	return sc
}

// KernelScenarios are explain --simulate's scenarios: its own, with
// drivers' interference, then the model's, without.
func KernelScenarios() []Scenario {
	var out []Scenario
	for _, k := range kernelScenarios {
		out = append(out, k.Scenario)
	}
	return append(out, scenarios...)
}

// KernelScenarioNames lists KernelScenarios' names, comma-separated.
func KernelScenarioNames() string {
	var names []string
	for _, sc := range KernelScenarios() {
		names = append(names, sc.Name)
	}
	return strings.Join(names, ", ")
}

// FindKernel is the named scenario of KernelScenarios: one of the model's
// has no drivers' interference.
func FindKernel(name string) (KernelScenario, bool) {
	for _, k := range kernelScenarios {
		if k.Name == name {
			return k, true
		}
	}
	sc, ok := Find(name)
	return KernelScenario{Scenario: sc}, ok
}

// NewKernelHost is a host of the named scenario (KernelScenarios),
// seeded, whose Sleeps its Kernel logs.
func NewKernelHost(name string, seed uint64) (*Host, *Kernel, error) {
	ks, ok := FindKernel(name)
	if !ok {
		return nil, nil, fmt.Errorf("unknown scenario %q: the scenarios are %s", name, KernelScenarioNames())
	}
	return NewKernelHostFor(ks, seed)
}

// NewKernelHostFor is NewKernelHost of a scenario.
func NewKernelHostFor(ks KernelScenario, seed uint64) (*Host, *Kernel, error) {
	for _, d := range ks.Drivers {
		if d.Burst < 1 || d.DPCMinNs <= 0 || d.DPCMaxNs < d.DPCMinNs || d.ISRMaxNs < d.ISRMinNs || d.Prob < 0 || d.Prob > 1 {
			return nil, nil, fmt.Errorf("scenario %s: driver %s: not a burst the model can run", ks.Name, d.Image)
		}
	}
	h := NewHostFor(ks.Scenario, seed)
	f := fnv.New64a()
	f.Write([]byte("kernel " + ks.Name))
	k := &Kernel{sc: ks, rng: rand.New(rand.NewPCG(seed, f.Sum64()))}
	for i, d := range ks.Drivers {
		k.events = append(k.events, &etwkernel.ImageLoad{
			Kind: etwkernel.ImageDCStart, ImageBase: driverBase + uint64(i)*driverSize, ImageSize: driverSize,
			FileName: `\SystemRoot\System32\drivers\` + d.Image,
		})
	}
	h.kernel = k
	return h, k, nil
}

// sleepParts is one Sleep as the model computed it (ns): started at
// start, due at due, on a tick of period, ending on tick (an extra tick
// included), then preempt and suspend later.
type sleepParts struct {
	start, due, period, tick, preempt, suspend int64
}

// between draws uniformly from [lo, hi].
func (k *Kernel) between(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	return lo + k.rng.Int64N(hi-lo+1)
}

// sleep logs one Sleep and gives when the measuring thread is switched in.
func (k *Kernel) sleep(p sleepParts) int64 {
	if k.period == 0 {
		k.period = p.period
	}
	at := func(t int64) etwkernel.Common { return etwkernel.Common{At: t, ThreadID: KernelTID} }
	k.events = append(k.events, &etwkernel.CSwitch{Common: at(p.start + 500), OldThreadID: KernelTID, OldThreadPriority: measuringPriority, OldThreadState: 5, OldThreadWaitMode: 1})
	first := p.tick
	for first-p.period >= p.due {
		first -= p.period
	}
	for t := first; t <= p.tick; t += p.period {
		if n := len(k.clock); n == 0 || k.clock[n-1] < t {
			k.clock = append(k.clock, t)
		}
	}
	tr := Truth{Start: p.start, Due: p.due, AllowedNs: first - p.due, ClockToReadyNs: p.tick - first + p.suspend, ISRNs: map[string]int64{}, DPCNs: map[string]int64{}}
	cursor := p.tick + p.suspend
	other := p.preempt
	if other == 0 && k.sc.OtherProb > 0 && k.rng.Float64() < k.sc.OtherProb {
		other = k.between(k.sc.OtherMinNs, k.sc.OtherMaxNs)
	}
	if other > 0 {
		k.events = append(k.events, &etwkernel.CSwitch{Common: at(cursor), NewThreadID: OtherTID, NewThreadPriority: OtherPriority})
	}
	for i, d := range k.sc.Drivers {
		if k.rng.Float64() >= d.Prob {
			continue
		}
		routine := driverBase + uint64(i)*driverSize + routineOffset
		for range 1 + k.rng.IntN(d.Burst) {
			if d.ISRMaxNs > 0 {
				n := k.between(d.ISRMinNs, d.ISRMaxNs)
				k.events = append(k.events, &etwkernel.ISR{Common: at(cursor + n), InitialTime: cursor, Routine: routine, Claimed: true, Vector: 0x60 + uint8(i)})
				cursor += n
				tr.ISRNs[d.Image] += n
			}
			n := k.between(d.DPCMinNs, d.DPCMaxNs)
			k.events = append(k.events, &etwkernel.DPC{Common: at(cursor + n), Kind: etwkernel.NormalDPC, InitialTime: cursor, Routine: routine})
			cursor += n
			tr.DPCNs[d.Image] += n
		}
	}
	expiry := k.between(1000, 2000)
	cursor += expiry
	tr.ClockToReadyNs += expiry
	k.events = append(k.events, &etwkernel.ReadyThread{Common: at(cursor), TThreadID: KernelTID, Flag: 0x1})
	old, oldPriority := uint32(0), int8(0)
	if other > 0 {
		cursor += other
		tr.OtherNs, tr.OtherTID = other, OtherTID
		old, oldPriority = OtherTID, OtherPriority
	}
	k.events = append(k.events, &etwkernel.CSwitch{Common: at(cursor), NewThreadID: KernelTID, OldThreadID: old, NewThreadPriority: measuringPriority, OldThreadPriority: oldPriority})
	tr.Switch = cursor
	k.truth = append(k.truth, tr)
	return cursor
}

// TID is the measuring thread's id on the model.
func (k *Kernel) TID() int { return KernelTID }

// Events are the events logged so far, in the order logged (by time but
// for the image rundown, first).
func (k *Kernel) Events() []etwkernel.Event { return k.events }

// ClockInterrupts are the clock interrupts' times (ns) logged so far,
// ascending.
func (k *Kernel) ClockInterrupts() []int64 { return k.clock }

// PeriodNs is the tick period of the first Sleep logged (ns), 0 before it.
func (k *Kernel) PeriodNs() int64 { return k.period }

// Truth is what delayed each Sleep logged so far, in order.
func (k *Kernel) Truth() []Truth { return k.truth }

// Scenario is the scenario the kernel logs.
func (k *Kernel) Scenario() KernelScenario { return k.sc }
