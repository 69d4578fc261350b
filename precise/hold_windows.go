package precise

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/winapi"
)

// hold makes Hold's request: through the process's one
// NtSetTimerResolution request (nativewait.RequestResolution, which the
// tool's own holds share), or on builds without high-resolution waitable
// timers through timeBeginPeriod of whole milliseconds, which winmm counts
// per call.
func hold(period time.Duration) (func() error, error) {
	units := uint64(period / 100)
	if units > 0xFFFFFFFF {
		return nil, errors.New("the period is too long for NtSetTimerResolution")
	}
	ms, err := timerinfo.WholeMillisecondHold(nativewait.HighResolutionTimers(), uint32(units))
	if err != nil {
		return nil, err
	}
	var release func() error
	if ms != 0 {
		if err := winapi.TimeBeginPeriod(ms); err != nil {
			return nil, fmt.Errorf("timeBeginPeriod(%d): %w", ms, err)
		}
		var once sync.Once
		release = func() error {
			var err error
			once.Do(func() {
				if e := winapi.TimeEndPeriod(ms); e != nil {
					err = fmt.Errorf("timeEndPeriod(%d): %w", ms, e)
				}
			})
			return err
		}
	} else if _, release, err = nativewait.RequestResolution(uint32(units)); err != nil {
		return nil, err
	}
	// Where the class is unknown (before Windows 11), there is no
	// throttling to opt out of: the error is not the caller's concern.
	optOutOnce.Do(func() { _ = winapi.IgnoreTimerResolutionThrottling() })
	return release, nil
}

var optOutOnce sync.Once
