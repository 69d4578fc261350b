package platform

import "fmt"

// eAccessDenied is E_ACCESSDENIED, HRESULT_FROM_WIN32(ERROR_ACCESS_DENIED):
// what ITaskFolder::RegisterTask and RegisterTaskDefinition return when
// access is denied ("ITaskFolder::RegisterTaskDefinition method
// (taskschd.h)", Microsoft Learn: "E_ACCESS_DENIED 0x80070005"), and
// GetTask and DeleteTask for a task whose security descriptor does not
// grant the caller access. Task Scheduler adds an allow ACE for a task's
// principal ("TASK_CREATION enumeration (taskschd.h)", Microsoft Learn:
// TASK_DONT_ADD_PRINCIPAL_ACE), tickscope's task's principal is the user
// who registered it, and persist.TaskName is one name for the whole
// machine: so a second user's apply --persist or startup install, with
// TASK_CREATE_OR_UPDATE, asks to update the first user's task, which its
// descriptor does not let a user who is not an administrator do, and gets
// this. (An administrator can read the task: refuseOtherUsers in package
// hold refuses that case by its principal, before any call is denied.)
const eAccessDenied = 0x80070005

// taskTaken is what a Task Scheduler call on the task named task says in
// place of a bare HRESULT when it failed with code E_ACCESSDENIED and the
// task exists: another user's task holds the name. deleteByHand is the
// command an administrator types to delete it. Any other code, or a task
// that does not exist (a policy denying the caller new tasks), gives nil:
// the call's own error says it.
// The error wraps cause, the call's own.
func taskTaken(call, task string, code uint32, cause error, exists bool, deleteByHand string) error {
	if code != eAccessDenied || !exists {
		return nil
	}
	return &takenError{cause: cause, text: fmt.Sprintf("%s: the Task Scheduler task %s is another user's (access to it is denied: E_ACCESSDENIED, 0x80070005); its name is one for the whole machine, so each machine has one startup holder: it is left alone; the user it belongs to removes it with tickscope startup remove, or an administrator, from a terminal started with \"Run as administrator\", with: %s", call, task, deleteByHand)}
}

type takenError struct {
	cause error
	text  string
}

func (e *takenError) Error() string { return e.text }
func (e *takenError) Unwrap() error { return e.cause }
