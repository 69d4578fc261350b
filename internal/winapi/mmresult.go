package winapi

import "fmt"

// MMResult is a multimedia-timer function's MMRESULT. timeBeginPeriod,
// timeEndPeriod and timeKillEvent report failure in their return value and
// set no last error, so an error built from GetLastError would name
// whatever failed before them ("timeBeginPeriod function (timeapi.h)",
// "timeEndPeriod function (timeapi.h)", Microsoft Learn: "Returns
// TIMERR_NOERROR if successful or TIMERR_NOCANDO if the resolution
// specified in uPeriod is out of range"). It is a plain value, portable, so
// that its names are tested on every OS.
type MMResult uint32

// MMRESULT values (mmsystem.h, timeapi.h).
const (
	TIMERR_NOERROR      MMResult = 0
	MMSYSERR_ERROR      MMResult = 1
	MMSYSERR_INVALPARAM MMResult = 11
	TIMERR_NOCANDO      MMResult = 97
)

func (r MMResult) Error() string {
	switch r {
	case TIMERR_NOERROR:
		return "MMRESULT TIMERR_NOERROR (0)"
	case MMSYSERR_ERROR:
		return "MMRESULT MMSYSERR_ERROR (1)"
	case MMSYSERR_INVALPARAM:
		return "MMRESULT MMSYSERR_INVALPARAM (11)"
	case TIMERR_NOCANDO:
		return "MMRESULT TIMERR_NOCANDO (97): the period is out of the range the timer supports"
	}
	return fmt.Sprintf("MMRESULT %d", uint32(r))
}

// MMError is the error a multimedia-timer call's MMRESULT means: nil for
// TIMERR_NOERROR, the MMResult otherwise.
func MMError(r uint32) error {
	if MMResult(r) == TIMERR_NOERROR {
		return nil
	}
	return MMResult(r)
}

// ErrReturnedNULL is timeSetEvent's failure: it returns NULL, a timer id of
// 0, and documents no further reason ("timeSetEvent function", Microsoft
// Learn: "If the function fails, it returns NULL and the timer event is not
// created").
var ErrReturnedNULL = fmt.Errorf("returned NULL (the documented failure; it gives no reason)")
