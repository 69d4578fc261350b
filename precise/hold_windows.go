package precise

import (
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/platform/winapi"
)

// Hold requests a timer period for this process with NtSetTimerResolution
// and opts the process out of Windows 11's timer-resolution throttling, so
// that the request holds while its windows are hidden. release withdraws it.
// Since Windows 10 2004 the request affects this process only.
func Hold(period time.Duration) (release func(), err error) {
	_, withdraw, err := nativewait.RequestResolution(uint32(period / 100))
	if err != nil {
		return nil, err
	}
	// Where the class is unknown (before Windows 11), there is no throttling
	// to opt out of: the error is not the caller's concern.
	_ = winapi.IgnoreTimerResolutionThrottling()
	return func() { withdraw() }, nil
}
