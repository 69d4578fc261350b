package attribution

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tickscope/tickscope/internal/tracefs"
)

// Events are the tracepoints the attribution reads, as tracefs.Options
// names them; a kernel that lacks some still gives what the others say.
var Events = []string{
	"timer:hrtimer_start", "timer:hrtimer_expire_entry", "timer:hrtimer_expire_exit",
	"irq_vectors:local_timer_entry", "irq_vectors:local_timer_exit",
	"irq_vectors:reschedule_entry", "irq_vectors:reschedule_exit",
	"irq_vectors:call_function_entry", "irq_vectors:call_function_exit",
	"irq_vectors:call_function_single_entry", "irq_vectors:call_function_single_exit",
	"irq_vectors:irq_work_entry", "irq_vectors:irq_work_exit",
	"irq:irq_handler_entry", "irq:irq_handler_exit",
	"irq:softirq_entry", "irq:softirq_exit",
	"nmi:nmi_handler",
	"sched:sched_waking", "sched:sched_wakeup", "sched:sched_switch", "sched:sched_migrate_task",
	"power:cpu_idle",
}

// vectorRows are the /proc/interrupts rows of x86's irq_vectors events.
var vectorRows = map[string]string{
	"local_timer": "LOC", "reschedule": "RES", "call_function": "CAL",
	"call_function_single": "CAL", "irq_work": "IWI", "spurious_apic": "SPU",
	"error_apic": "ERR", "thermal_apic": "TRM", "threshold_apic": "THR",
	"deferred_error_apic": "DFR", "x86_platform_ipi": "PLT",
}

// Decoder turns ring-buffer records into Events, by the layouts this
// kernel gave for them.
type Decoder struct {
	byID map[uint16]decoder
}

type decoder struct {
	kind EventKind
	name string // the event's name, without its system
	f    *tracefs.Format
}

// NewDecoder takes the formats of the events enabled, by "system:event"
// name; records of any other type are skipped by Decode.
func NewDecoder(formats map[string]*tracefs.Format) (*Decoder, error) {
	d := &Decoder{byID: map[uint16]decoder{}}
	for full, f := range formats {
		system, name, ok := strings.Cut(full, ":")
		if !ok || f == nil {
			return nil, fmt.Errorf("attribution: event %q is not system:event", full)
		}
		var k EventKind
		switch {
		case full == "timer:hrtimer_start":
			k = HrtimerStart
		case full == "timer:hrtimer_expire_entry":
			k = HrtimerExpireEntry
		case full == "timer:hrtimer_expire_exit":
			k = HrtimerExpireExit
		case system == "irq_vectors" && strings.HasSuffix(name, "_entry"):
			k = VectorEntry
		case system == "irq_vectors" && strings.HasSuffix(name, "_exit"):
			k = VectorExit
		case full == "irq:irq_handler_entry":
			k = IRQEntry
		case full == "irq:irq_handler_exit":
			k = IRQExit
		case full == "irq:softirq_entry":
			k = SoftirqEntry
		case full == "irq:softirq_exit":
			k = SoftirqExit
		case full == "nmi:nmi_handler":
			k = NMI
		case full == "sched:sched_waking":
			k = Waking
		case full == "sched:sched_wakeup":
			k = Wakeup
		case full == "sched:sched_switch":
			k = Switch
		case full == "sched:sched_migrate_task":
			k = Migrate
		case full == "power:cpu_idle":
			k = CPUIdle
		default:
			return nil, fmt.Errorf("attribution: event %q is not one the attribution reads", full)
		}
		if prev, dup := d.byID[f.ID]; dup {
			return nil, fmt.Errorf("attribution: events %s and %s share the ID %d", prev.name, name, f.ID)
		}
		d.byID[f.ID] = decoder{kind: k, name: name, f: f}
	}
	return d, nil
}

// Decode reads one record of CPU cpu's buffer; ok is false for a record
// of an event the Decoder was not given.
func (d *Decoder) Decode(cpu int, e tracefs.Event) (ev Event, ok bool, err error) {
	dec, ok := d.byID[e.Type]
	if !ok {
		return Event{}, false, nil
	}
	if e.Timestamp > 1<<62 {
		return Event{}, false, fmt.Errorf("attribution: %s at %d: time past int64", dec.name, e.Timestamp)
	}
	f, data := dec.f, e.Data
	ev = Event{Time: int64(e.Timestamp), CPU: cpu, Kind: dec.kind, TargetCPU: -1, OrigCPU: -1}
	var errs []error
	num := func(name string) int64 {
		v, err := f.Int(data, name)
		errs = append(errs, err)
		return v
	}
	unum := func(name string) uint64 {
		v, err := f.Uint(data, name)
		errs = append(errs, err)
		return v
	}
	str := func(name string) string {
		v, err := f.String(data, name)
		errs = append(errs, err)
		return v
	}
	ev.PID = int(num("common_pid"))
	switch dec.kind {
	case HrtimerStart:
		ev.Hrtimer = unum("hrtimer")
		ev.Expires, ev.SoftExpires = num("expires"), num("softexpires")
	case HrtimerExpireEntry, HrtimerExpireExit:
		ev.Hrtimer = unum("hrtimer")
	case VectorEntry, VectorExit:
		ev.IRQ = int(num("vector"))
		base := strings.TrimSuffix(strings.TrimSuffix(dec.name, "_entry"), "_exit")
		ev.Name = vectorRows[base]
		if ev.Name == "" {
			ev.Name = base
		}
	case IRQEntry:
		ev.IRQ, ev.Name = int(num("irq")), str("name")
	case IRQExit:
		ev.IRQ = int(num("irq"))
	case SoftirqEntry, SoftirqExit:
		ev.Vec = int(unum("vec"))
		ev.Name = SoftirqName(ev.Vec)
	case NMI:
		ev.DurationNS = num("delta_ns")
	case Waking, Wakeup:
		ev.TargetPID, ev.TargetCPU, ev.Name = int(num("pid")), int(num("target_cpu")), str("comm")
	case Migrate:
		ev.TargetPID, ev.OrigCPU, ev.TargetCPU, ev.Name = int(num("pid")), int(num("orig_cpu")), int(num("dest_cpu")), str("comm")
	case Switch:
		ev.PrevPID, ev.PrevComm, ev.PrevState = int(num("prev_pid")), str("prev_comm"), num("prev_state")
		ev.NextPID, ev.NextComm = int(num("next_pid")), str("next_comm")
	case CPUIdle:
		s := unum("state")
		ev.State = int(int32(uint32(s)))
		if uint32(s) == 0xffffffff {
			ev.State = IdleExit
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Event{}, false, err
	}
	return ev, true, nil
}
