package platform

import (
	"errors"
	"testing"
)

// A failure is tried again; the first success is kept.
func TestOnceOKKeepsOnlyASuccess(t *testing.T) {
	results := []error{errors.New("bcdedit: timed out"), nil, errors.New("never asked")}
	calls := 0
	read := onceOK(func() (int, error) {
		err := results[calls]
		calls++
		return calls, err
	})
	for i, want := range []struct {
		v   int
		err bool
	}{{1, true}, {2, false}, {2, false}} {
		v, err := read()
		if v != want.v || (err != nil) != want.err {
			t.Errorf("call %d = %d, %v; want %d, error %v", i, v, err, want.v, want.err)
		}
	}
	if calls != 2 {
		t.Errorf("read %d times, want 2", calls)
	}
}
