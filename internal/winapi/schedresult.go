package winapi

import "fmt"

// The Task Scheduler's success codes that are warnings: RegisterTask
// returns them with the task registered, but a task that may never start
// ("Task Scheduler Error and Success Constants", Microsoft Learn;
// winerror.h). An HRESULT that is not negative is a success, so these
// would pass for S_OK unless looked for. They are plain values, portable,
// so that their names are tested on every OS.
const (
	// "The task is registered, but not all specified triggers will start
	// the task."
	SCHED_S_SOME_TRIGGERS_FAILED = 0x0004131B
	// "The task is registered, but may fail to start. Batch logon
	// privilege needs to be enabled for the task principal."
	SCHED_S_BATCH_LOGON_PROBLEM = 0x0004131C
)

// TaskRegisteredWarning is what a registration that succeeded with one of
// the warning codes reports: the task is registered, and may not start.
type TaskRegisteredWarning struct{ Code uint32 }

func (w *TaskRegisteredWarning) Error() string {
	switch w.Code {
	case SCHED_S_SOME_TRIGGERS_FAILED:
		return "the task is registered, but not all of its triggers will start it (SCHED_S_SOME_TRIGGERS_FAILED, 0x0004131B)"
	case SCHED_S_BATCH_LOGON_PROBLEM:
		return "the task is registered, but may fail to start: its principal needs the batch logon right (SCHED_S_BATCH_LOGON_PROBLEM, 0x0004131C)"
	}
	return fmt.Sprintf("the task is registered with the success code 0x%08X", w.Code)
}

// RegisterWarning is the warning a RegisterTask success code carries: nil
// for S_OK and every success code that is not a warning the Task
// Scheduler documents, a *TaskRegisteredWarning for those that are. code
// is the HRESULT's 32 bits; a failure (negative) is not its to judge and
// gives nil.
func RegisterWarning(code uint32) error {
	switch code {
	case SCHED_S_SOME_TRIGGERS_FAILED, SCHED_S_BATCH_LOGON_PROBLEM:
		return &TaskRegisteredWarning{Code: code}
	}
	return nil
}
