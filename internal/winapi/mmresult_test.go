package winapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/winapi"
)

// A winmm failure is named by its MMRESULT, never by GetLastError, which
// these calls do not set.
func TestMMError(t *testing.T) {
	tests := []struct {
		code uint32
		want string // "" for no error
	}{
		{0, ""},
		{97, "TIMERR_NOCANDO (97)"},
		{11, "MMSYSERR_INVALPARAM (11)"},
		{1, "MMSYSERR_ERROR (1)"},
		{12345, "MMRESULT 12345"},
	}
	for _, tt := range tests {
		err := winapi.MMError(tt.code)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("MMError(%d) = %v, want nil", tt.code, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("MMError(%d) = %v, want it to name %q", tt.code, err, tt.want)
		}
	}
	var r winapi.MMResult
	if !errors.As(winapi.MMError(97), &r) || r != winapi.TIMERR_NOCANDO {
		t.Errorf("MMError(97) does not unwrap to TIMERR_NOCANDO")
	}
}
