package winapi_test

import (
	"errors"
	"syscall"
	"testing"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/winapi"
)

// TestFailuresReadWhereDocumented: each way a //sys line says a failure is
// read, on a call made to fail as its page documents: the last error after
// a failure value other than 0 (GetThreadPriority), the last error after
// FALSE (QueryUnbiasedInterruptTime), a returned Win32 error code
// (CloseTrace), a returned NTSTATUS (NtSetTimerResolution), a returned
// MMRESULT (timeKillEvent), and a string that cannot cross (StartTrace).
func TestFailuresReadWhereDocumented(t *testing.T) {
	var inJob bool
	for _, c := range []struct {
		name string
		err  error
		want func(error) bool
	}{
		{"GetThreadPriority(NULL): THREAD_PRIORITY_ERROR_RETURN, then ERROR_INVALID_HANDLE", func() error {
			_, err := winapi.GetThreadPriority(0)
			return err
		}(), is(windows.ERROR_INVALID_HANDLE)},
		{"QueryUnbiasedInterruptTime(NULL): FALSE, then the last error", winapi.QueryUnbiasedInterruptTime(nil), func(err error) bool { return err != nil }},
		{"CloseTrace(0): ERROR_INVALID_HANDLE returned", winapi.CloseTrace(0), is(windows.ERROR_INVALID_HANDLE)},
		{"NtSetTimerResolution(FALSE) with no request: STATUS_TIMER_RESOLUTION_NOT_SET returned", winapi.NtSetTimerResolution(5000, false, new(uint32)), is(winapi.STATUS_TIMER_RESOLUTION_NOT_SET)},
		{"timeKillEvent of no timer: an MMRESULT", winapi.TimeKillEvent(0xfffff), func(err error) bool {
			var r winapi.MMResult
			return errors.As(err, &r)
		}},
		{"StartTrace with a NUL in its name: refused before the call", winapi.StartTrace(new(uint64), "a\x00b", winapi.NewTraceProperties()), is(syscall.EINVAL)},
		{"QueryUnbiasedInterruptTime: succeeds", winapi.QueryUnbiasedInterruptTime(new(uint64)), is(nil)},
		{"IsProcessInJob(this process, any job): succeeds", winapi.IsProcessInJob(windows.CurrentProcess(), 0, &inJob), is(nil)},
	} {
		if !c.want(c.err) {
			t.Errorf("%s: got %v (%#v)", c.name, c.err, c.err)
		}
	}
}

func is(target error) func(error) bool {
	return func(err error) bool {
		if target == nil {
			return err == nil
		}
		return errors.Is(err, target)
	}
}
