package platform

import (
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

var _ seam.StopWatcher = (*windowsHost)(nil)

// WatchStops makes the Windows host a seam.StopWatcher of suspends (sleep,
// hibernation): the interrupt time less the unbiased interrupt time, which
// grows only by the time the machine was suspended. Before Windows 10,
// which has no QueryInterruptTime, it tells nothing (a nil watch). Windows
// has no job control; a process suspended by a debugger or by
// NtSuspendProcess, or a paused virtual machine, is not told.
func (h *windowsHost) WatchStops() (seam.StopWatch, error) {
	if !winapi.HasQueryInterruptTime() {
		return nil, nil
	}
	w := &suspendWatch{}
	bias, ok := w.read()
	if !ok {
		return nil, nil
	}
	w.last = bias
	return w, nil
}

// suspendWatch keeps the last bias read, which it gives when a read fails,
// so that a failure never reads as a suspend.
type suspendWatch struct{ last int64 }

// read is the interrupt time's bias in ns. Both counts step at each clock
// interrupt, so the two are read between two equal reads of the biased
// one: the difference is then the bias exactly.
func (*suspendWatch) read() (int64, bool) {
	for range 8 {
		var before, unbiased, after uint64
		winapi.QueryInterruptTime(&before)
		if winapi.QueryUnbiasedInterruptTime(&unbiased) != nil {
			return 0, false
		}
		winapi.QueryInterruptTime(&after)
		if before == after && before >= unbiased {
			return int64(before-unbiased) * 100, true
		}
	}
	return 0, false
}

func (w *suspendWatch) Suspended() int64 {
	if ns, ok := w.read(); ok {
		w.last = ns
	}
	return w.last
}

func (*suspendWatch) Continued() []int64 { return nil }
func (*suspendWatch) Close()             {}
