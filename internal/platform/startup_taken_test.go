package platform

import (
	"errors"
	"strings"
	"testing"
)

// E_ACCESSDENIED on an existing task is said as another user's task
// holding the machine's one name, with who can remove it; anything else
// is left to the call's own error.
func TestTaskTakenNamesTheSituation(t *testing.T) {
	const byHand = "schtasks /Delete /TN tickscope /F"
	cause := errors.New("HRESULT 0x80070005: Access is denied.")
	err := taskTaken("ITaskFolder::RegisterTask(tickscope)", "tickscope", 0x80070005, cause, true, byHand)
	if err == nil {
		t.Fatal("E_ACCESSDENIED on an existing task: nil")
	}
	if !errors.Is(err, cause) {
		t.Errorf("%v does not wrap the call's own error", err)
	}
	for _, want := range []string{"ITaskFolder::RegisterTask(tickscope): ", "task tickscope is another user's", "0x80070005", "one for the whole machine", "left alone", "tickscope startup remove", "administrator", byHand} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	for _, c := range []struct {
		code   uint32
		exists bool
	}{
		{0x80070005, false}, // no such task: a policy, not another user
		{0x80070002, true},  // ERROR_FILE_NOT_FOUND
		{0x80004005, true},  // E_FAIL: any other failure
		{0, true},
	} {
		if err := taskTaken("ITaskFolder::RegisterTask(tickscope)", "tickscope", c.code, cause, c.exists, byHand); err != nil {
			t.Errorf("code 0x%08X, exists %v: %v, want nil", c.code, c.exists, err)
		}
	}
}
