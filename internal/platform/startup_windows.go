package platform

import (
	"errors"
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/winapi"
)

func (system) Startup() seam.Startup { return taskStartup{folder: `\`} }

// taskStartup is the Task Scheduler task named tickscope, in folder (the
// root folder, `\`, for the product; tests register theirs elsewhere). It
// talks to Task Scheduler through its COM interfaces (ITaskService,
// ITaskFolder, IRegisteredTask; "Task Scheduler 2.0 Interfaces", Microsoft
// Learn), not through schtasks.exe: the task's XML crosses as UTF-16
// whatever the user's name, folder or console code page, failures come
// back as HRESULTs rather than text to parse, and no process is started.
type taskStartup struct{ folder string }

func (taskStartup) Describe() string { return "Task Scheduler task " + persist.TaskName }

// errTaskNotFound is GetTask's answer for a task that does not exist
// ("ITaskFolder::GetTask method", Microsoft Learn: the task is looked up
// by path; a missing one is the Win32 ERROR_FILE_NOT_FOUND as an HRESULT).
var errTaskNotFound = winapi.HRESULTFromWin32(windows.ERROR_FILE_NOT_FOUND)

// taskError is the error of the Task Scheduler call call on the task:
// E_ACCESSDENIED on a task that exists says that another user's task
// holds the name (taskTaken), anything else is the call's OSError.
// exists tells whether the task exists, asked only for E_ACCESSDENIED.
func taskError(call string, err error, exists func() bool) error {
	var hr winapi.HRESULT
	if errors.As(err, &hr) && uint32(hr) == eAccessDenied && exists() {
		return taskTaken(call, persist.TaskName, uint32(hr), &seam.OSError{Call: call, Err: err}, true, taskStartup{}.DeleteByHand())
	}
	return &seam.OSError{Call: call, Err: err}
}

// taskExists reports whether a task of the name is in the folder, as GetTask
// sees it: there, or there and denied to the caller.
func taskExists(folder *winapi.TaskFolder) bool {
	task, err := folder.GetTask(persist.TaskName)
	if err == nil {
		task.Release()
		return true
	}
	var hr winapi.HRESULT
	return errors.As(err, &hr) && uint32(hr) == eAccessDenied
}

// inFolder connects to the local Task Scheduler as the calling user and
// calls use with the task folder. COM is per thread: the goroutine stays
// on one thread, in the multithreaded apartment, until the objects are
// released ("CoInitializeEx function", Microsoft Learn).
func (t taskStartup) inFolder(use func(*winapi.TaskFolder) error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// S_FALSE (1): the thread was in the apartment already; the call
	// still counts and is undone by CoUninitialize. RPC_E_CHANGED_MODE:
	// it is in a single-threaded apartment, which serves as well, and is
	// not this call's to undo.
	switch err := windows.CoInitializeEx(0, windows.COINIT_MULTITHREADED); {
	case err == nil || err == syscall.Errno(1):
		defer windows.CoUninitialize()
	case err == syscall.Errno(winapi.RPC_E_CHANGED_MODE):
	default:
		return &seam.OSError{Call: "CoInitializeEx", Err: err}
	}
	service, err := winapi.NewTaskService()
	if err != nil {
		return &seam.OSError{Call: "CoCreateInstance(TaskScheduler)", Err: err}
	}
	defer service.Release()
	if err := service.Connect(); err != nil {
		return &seam.OSError{Call: "ITaskService::Connect", Err: err}
	}
	folder, err := service.GetFolder(t.folder)
	if err != nil {
		return &seam.OSError{Call: fmt.Sprintf("ITaskService::GetFolder(%s)", t.folder), Err: err}
	}
	defer folder.Release()
	return use(folder)
}

// withTask calls use with the registered task; found is false when there
// is none.
func (t taskStartup) withTask(use func(*winapi.RegisteredTask) error) (found bool, err error) {
	err = t.inFolder(func(folder *winapi.TaskFolder) error {
		task, err := folder.GetTask(persist.TaskName)
		if errors.Is(err, errTaskNotFound) {
			return nil
		}
		if err != nil {
			// Denied, the task is there: GetTask finds a missing one
			// (errTaskNotFound) first.
			return taskError("ITaskFolder::GetTask("+persist.TaskName+")", err, func() bool { return true })
		}
		defer task.Release()
		found = true
		return use(task)
	})
	return found, err
}

// Read returns the task's XML as Task Scheduler holds it, as UTF-8, or nil
// when no task of that name exists.
func (t taskStartup) Read() ([]byte, error) {
	var definition []byte
	_, err := t.withTask(func(task *winapi.RegisteredTask) error {
		text, err := task.XML()
		if err != nil {
			return &seam.OSError{Call: "IRegisteredTask::get_Xml", Err: err}
		}
		definition = []byte(text)
		return nil
	})
	return definition, err
}

// Install registers the definition (persist.TaskXML's, UTF-16 or UTF-8),
// replacing a task of that name (TASK_CREATE_OR_UPDATE), to run with the
// logon user's interactive token as its XML says. A registration that
// succeeds with a warning (the task may never start) is an error that
// names it.
func (t taskStartup) Install(definition []byte) error {
	text, err := persist.DefinitionText(definition)
	if err != nil {
		return err
	}
	return t.inFolder(func(folder *winapi.TaskFolder) error {
		task, warning, err := folder.RegisterTask(persist.TaskName, text, winapi.TASK_CREATE_OR_UPDATE, winapi.TASK_LOGON_INTERACTIVE_TOKEN)
		if err != nil {
			return taskError("ITaskFolder::RegisterTask("+persist.TaskName+")", err, func() bool { return taskExists(folder) })
		}
		task.Release()
		if warning != nil {
			// A holder whose trigger may never fire is not what
			// --persist promises: it fails, saying the task is
			// registered all the same.
			return fmt.Errorf("ITaskFolder::RegisterTask(%s): %w; its description says how to remove it", persist.TaskName, warning)
		}
		return nil
	})
}

// Start runs the task now ("IRegisteredTask::Run method", Microsoft Learn).
func (t taskStartup) Start() error {
	found, err := t.withTask(func(task *winapi.RegisteredTask) error {
		if err := task.Run(); err != nil {
			return &seam.OSError{Call: "IRegisteredTask::Run", Err: err}
		}
		return nil
	})
	if err == nil && !found {
		return &seam.OSError{Call: "ITaskFolder::GetTask(" + persist.TaskName + ")", Err: errTaskNotFound}
	}
	return err
}

// Stop asks Task Scheduler to stop the task's instances ("IRegisteredTask::
// Stop method", Microsoft Learn), then ends the holder its lock's record
// names if it still runs and is this tickscope's (endHolder): it may have
// been started by hand, or Task Scheduler may not stop it. Task
// Scheduler's answer is not needed: the holder's lock says whether it
// still runs.
func (t taskStartup) Stop() error {
	t.withTask(func(task *winapi.RegisteredTask) error { return task.Stop() })
	return endHolder()
}

// Delete unregisters the task ("ITaskFolder::DeleteTask method", Microsoft
// Learn).
func (t taskStartup) Delete() error {
	return t.inFolder(func(folder *winapi.TaskFolder) error {
		if err := folder.DeleteTask(persist.TaskName); err != nil {
			return taskError("ITaskFolder::DeleteTask("+persist.TaskName+")", err, func() bool { return taskExists(folder) })
		}
		return nil
	})
}

// DeleteByHand is what a user types at a prompt: schtasks is on every
// Windows.
func (taskStartup) DeleteByHand() string { return "schtasks /Delete /TN " + persist.TaskName + " /F" }
