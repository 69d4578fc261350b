package winapi_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/winapi"
)

// RegisterTask's success codes that say the task may never start are
// warnings, named; every other success code (S_OK, S_FALSE) is not, and a
// failure is not RegisterWarning's to judge.
func TestRegisterWarning(t *testing.T) {
	tests := []struct {
		code uint32
		want string // "" for no warning
	}{
		{0, ""},
		{1, ""},
		{0x0004131B, "SCHED_S_SOME_TRIGGERS_FAILED"},
		{0x0004131C, "SCHED_S_BATCH_LOGON_PROBLEM"},
		{0x00041300, ""}, // SCHED_S_TASK_READY: a status, not RegisterTask's
		{0x80070005, ""}, // E_ACCESSDENIED: a failure
	}
	for _, tt := range tests {
		err := winapi.RegisterWarning(tt.code)
		if tt.want == "" {
			if err != nil {
				t.Errorf("RegisterWarning(0x%08X) = %v, want nil", tt.code, err)
			}
			continue
		}
		var w *winapi.TaskRegisteredWarning
		if !errors.As(err, &w) || w.Code != tt.code {
			t.Errorf("RegisterWarning(0x%08X) = %v, want a *TaskRegisteredWarning", tt.code, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tt.want) || !strings.Contains(msg, "registered") {
			t.Errorf("RegisterWarning(0x%08X) says %q, want it to name %s and say the task is registered", tt.code, msg, tt.want)
		}
	}
}
