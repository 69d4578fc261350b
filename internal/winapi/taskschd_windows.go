package winapi

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"unsafe"

	"unicode/utf16"

	"golang.org/x/sys/windows"
)

// The Task Scheduler 2.0 scripting objects (taskschd.h, "Task Scheduler
// Reference", Microsoft Learn), bound by hand: the few vtable calls that
// register a task from its XML, read its XML back, run it, stop it and
// delete it. Every string crosses as a BSTR (UTF-16), every failure comes
// back as an HRESULT, and no child process is started.
//
// Each interface is dual (IDispatch), so its vtable holds IUnknown's three
// methods, then IDispatch's four, then its own in the order taskschd.h
// declares them; the indexes below are those positions, written by hand:
// TestVtableIndexes holds each to its method's place in a table of the
// headers' order.
const (
	vtblRelease = 2 // IUnknown::Release

	vtblTaskServiceGetFolder = 7  // ITaskService::GetFolder
	vtblTaskServiceConnect   = 10 // ITaskService::Connect

	vtblTaskFolderGetTask      = 13 // ITaskFolder::GetTask
	vtblTaskFolderDeleteTask   = 15 // ITaskFolder::DeleteTask
	vtblTaskFolderRegisterTask = 16 // ITaskFolder::RegisterTask

	vtblRegisteredTaskRun    = 12 // IRegisteredTask::Run
	vtblRegisteredTaskGetXML = 20 // IRegisteredTask::get_Xml
	vtblRegisteredTaskStop   = 23 // IRegisteredTask::Stop
)

// The COM runtime's calls these bindings need, generated from their
// //sys lines (winapi_windows.go says how).
//
//	HRESULT CoCreateInstance(REFCLSID rclsid, LPUNKNOWN pUnkOuter,
//	    DWORD dwClsContext, REFIID riid, LPVOID *ppv);
//
// ("CoCreateInstance function (combaseapi.h)", Microsoft Learn.)
//
//sys	coCreateInstance(clsid *windows.GUID, outer unsafe.Pointer, context uint32, iid *windows.GUID, object unsafe.Pointer) (hr HRESULT) = ole32.CoCreateInstance
//
//	BSTR SysAllocString(const OLECHAR *psz);
//
// ("SysAllocString function (oleauto.h)", Microsoft Learn: NULL when out
// of memory.)
//
//sys	sysAllocString(s *uint16) (b bstr) = oleaut32.SysAllocString
//
//	void SysFreeString(BSTR bstrString);
//
// ("SysFreeString function (oleauto.h)", Microsoft Learn.)
//
//sys	sysFreeString(b bstr) = oleaut32.SysFreeString
//
//	UINT SysStringLen(BSTR pbstr);
//
// ("SysStringLen function (oleauto.h)", Microsoft Learn: the length in
// characters, without the terminating NUL.)
//
//sys	sysStringLen(b bstr) (n uint32) = oleaut32.SysStringLen

var (
	// CLSID_TaskScheduler and IID_ITaskService (taskschd.h).
	CLSID_TaskScheduler = windows.GUID{Data1: 0x0f87369f, Data2: 0xa4e5, Data3: 0x4cfc, Data4: [8]byte{0xbd, 0x3e, 0x73, 0xe6, 0x15, 0x45, 0x72, 0xdd}}
	IID_ITaskService    = windows.GUID{Data1: 0x2faba4c7, Data2: 0x4da9, Data3: 0x4013, Data4: [8]byte{0x96, 0x97, 0x20, 0xcc, 0x3f, 0xd4, 0x0f, 0x85}}
)

const (
	// CLSCTX_INPROC_SERVER: taskschd.dll is loaded into the process; it
	// talks to the Task Scheduler service itself (combaseapi.h).
	CLSCTX_INPROC_SERVER = 0x1
	// TASK_CREATE_OR_UPDATE is TASK_CREATE | TASK_UPDATE, a
	// TASK_CREATION value ("TASK_CREATION enumeration", Microsoft Learn).
	TASK_CREATE_OR_UPDATE = 6
	// TASK_LOGON_INTERACTIVE_TOKEN runs the task only in the user's
	// interactive session, with no stored password ("TASK_LOGON_TYPE
	// enumeration", Microsoft Learn): the task XML's InteractiveToken.
	TASK_LOGON_INTERACTIVE_TOKEN = 3
	// RPC_E_CHANGED_MODE is CoInitializeEx's answer on a thread already in
	// another apartment (winerror.h), as the HRESULT's 32 bits.
	RPC_E_CHANGED_MODE = 0x80010106
)

// HRESULT is a COM result; negative values are failures. As an error it
// names its code and, where the system has one, its message.
type HRESULT int32

func (hr HRESULT) Error() string {
	code := fmt.Sprintf("HRESULT 0x%08X", uint32(hr))
	// Errno's text is FormatMessage's, which knows the messages of
	// FACILITY_WIN32 codes and most COM ones, or "winapi error #N".
	if msg := windows.Errno(uint32(hr)).Error(); msg != "" && !strings.HasPrefix(msg, "winapi error") {
		return code + ": " + msg
	}
	return code
}

// HRESULTFromWin32 is HRESULT_FROM_WIN32 (winerror.h): a Win32 error code
// as a FACILITY_WIN32 failure.
func HRESULTFromWin32(e windows.Errno) HRESULT {
	if int32(e) <= 0 {
		return HRESULT(int32(e))
	}
	return HRESULT(int32(uint32(e)&0xffff | 7<<16 | 0x80000000))
}

// err is the HRESULT as an error, nil for S_OK, S_FALSE and every other
// success code.
func (hr HRESULT) err() error {
	if hr < 0 {
		return hr
	}
	return nil
}

// hresult turns a vtable call's return into an error, nil for success.
func hresult(r uintptr) error { return HRESULT(int32(uint32(r))).err() }

// comObject is a COM interface pointer: its first word points to the
// vtable.
type comObject struct{ vtbl *[32]uintptr }

// The vtable calls are written out one by one, each with every pointer it
// passes converted to uintptr in syscall.SyscallN's own argument list:
// only there does the compiler keep the object a converted pointer refers
// to alive and in place until the call returns (unsafe.Pointer's rule 4).
// A pointer converted earlier, in a caller or into a slice, is a plain
// integer to the runtime: a stack copied in between (the goroutine's stack
// growing, or the garbage collector shrinking it) leaves it pointing at
// the old stack, which COM then writes the result into. A pointer reaches
// these calls as unsafe.Pointer, which the garbage collector and the
// stack copier see and adjust. TestSyscallPointers holds the module to
// this.

// release is IUnknown::Release.
func (o *comObject) release() {
	if o != nil {
		syscall.SyscallN(o.vtbl[vtblRelease], uintptr(unsafe.Pointer(o)))
	}
}

// bstr is a BSTR allocated with SysAllocString, freed by free.
type bstr uintptr

// newBSTR allocates a BSTR holding s ("SysAllocString function",
// Microsoft Learn). A string holding NUL is refused: a BSTR made from a
// NUL-terminated string would lose what follows it.
func newBSTR(s string) (bstr, error) {
	p, err := windows.UTF16PtrFromString(s)
	if err != nil {
		return 0, err
	}
	b := sysAllocString(p)
	if b == 0 {
		return 0, errors.New("SysAllocString: out of memory")
	}
	return b, nil
}

func (b bstr) free() {
	if b != 0 {
		sysFreeString(b)
	}
}

// takeBSTR reads a BSTR a method returned and frees it: its length is
// SysStringLen's ("SysStringLen function", Microsoft Learn).
func takeBSTR(b *uint16) string {
	if b == nil {
		return ""
	}
	defer sysFreeString(bstr(unsafe.Pointer(b)))
	return string(utf16.Decode(unsafe.Slice(b, sysStringLen(bstr(unsafe.Pointer(b))))))
}

// variantSize is sizeof(VARIANT): 16 bytes on 32-bit Windows, 24 on
// 64-bit (oaidl.h: a VARTYPE, three reserved WORDs and a union whose
// largest member, BRECORD, is two pointers).
const variantSize = 8 + 2*unsafe.Sizeof(uintptr(0))

// is32bit: a VARIANT passed by value is pushed whole on 32-bit Windows.
const is32bit = unsafe.Sizeof(uintptr(0)) == 4

// variants is the memory of n VT_EMPTY VARIANTs passed by value on 64-bit
// Windows: there an argument larger than 8 (x64) or 16 (ARM64) bytes is
// passed as a pointer to a copy the caller makes, 16-byte aligned on x64
// ("x64 calling convention", "Overview of ARM64 ABI conventions",
// Microsoft Learn). On x86 a VARIANT is pushed whole, four zero words
// (VT_EMPTY is all zeros: "VARIANT structure", Microsoft Learn), and no
// memory is needed.
//
// The copies are in Go's heap, pinned until free: Pin's argument escapes,
// so the memory is never on a goroutine's stack, which can move while the
// callee reads it, and pinned it stays where it is until the call returns.
// The callee owns its copy, so each call has memory of its own.
type variants struct {
	memory []byte
	base   unsafe.Pointer
	pin    runtime.Pinner
}

// variantStride is variantSize rounded up to 16 bytes, so that each copy
// stays aligned.
const variantStride = int(variantSize+15) &^ 15

func newVariants(n int) *variants {
	v := &variants{memory: make([]byte, n*variantStride+16)}
	v.pin.Pin(&v.memory[0])
	base := unsafe.Pointer(&v.memory[0])
	v.base = unsafe.Add(base, (16-uintptr(base)%16)%16)
	return v
}

// at is the address of the i'th copy.
func (v *variants) at(i int) unsafe.Pointer { return unsafe.Add(v.base, i*variantStride) }

func (v *variants) free() { v.pin.Unpin() }

// TaskService is ITaskService ("ITaskService interface (taskschd.h)",
// Microsoft Learn).
type TaskService struct{ comObject }

// NewTaskService creates the Task Scheduler's service object. The calling
// thread must be in a COM apartment (CoInitializeEx).
func NewTaskService() (*TaskService, error) {
	var s *TaskService
	if err := coCreateInstance(&CLSID_TaskScheduler, nil, CLSCTX_INPROC_SERVER, &IID_ITaskService, unsafe.Pointer(&s)).err(); err != nil {
		return nil, err
	}
	return s, nil
}

// Release releases the object.
func (s *TaskService) Release() { s.release() }

// Connect connects to the local computer's Task Scheduler as the current
// user: serverName, user, domain and password all VT_EMPTY.
//
//	HRESULT Connect(VARIANT serverName, VARIANT user, VARIANT domain,
//	    VARIANT password);
//
// ("ITaskService::Connect method", Microsoft Learn.)
func (s *TaskService) Connect() error {
	fn := s.vtbl[vtblTaskServiceConnect]
	if is32bit {
		r, _, _ := syscall.SyscallN(fn, uintptr(unsafe.Pointer(s)), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
		return hresult(r)
	}
	v := newVariants(4)
	defer v.free()
	return hresult(s.connect(fn, v.at(0), v.at(1), v.at(2), v.at(3)))
}

func (s *TaskService) connect(fn uintptr, serverName, user, domain, password unsafe.Pointer) uintptr {
	r, _, _ := syscall.SyscallN(fn, uintptr(unsafe.Pointer(s)), uintptr(serverName), uintptr(user), uintptr(domain), uintptr(password))
	return r
}

// GetFolder returns the folder at path ("\" is the root).
//
//	HRESULT GetFolder(BSTR path, ITaskFolder **ppFolder);
//
// ("ITaskService::GetFolder method", Microsoft Learn.)
func (s *TaskService) GetFolder(path string) (*TaskFolder, error) {
	p, err := newBSTR(path)
	if err != nil {
		return nil, err
	}
	defer p.free()
	var f *TaskFolder
	r, _, _ := syscall.SyscallN(s.vtbl[vtblTaskServiceGetFolder], uintptr(unsafe.Pointer(s)), uintptr(p), uintptr(unsafe.Pointer(&f)))
	if err := hresult(r); err != nil {
		return nil, err
	}
	return f, nil
}

// TaskFolder is ITaskFolder ("ITaskFolder interface (taskschd.h)",
// Microsoft Learn).
type TaskFolder struct{ comObject }

// Release releases the object.
func (f *TaskFolder) Release() { f.release() }

// GetTask returns the registered task at path, relative to the folder. A
// task that does not exist is HRESULT_FROM_WIN32(ERROR_FILE_NOT_FOUND).
//
//	HRESULT GetTask(BSTR path, IRegisteredTask **ppTask);
//
// ("ITaskFolder::GetTask method", Microsoft Learn.)
func (f *TaskFolder) GetTask(path string) (*RegisteredTask, error) {
	p, err := newBSTR(path)
	if err != nil {
		return nil, err
	}
	defer p.free()
	var t *RegisteredTask
	r, _, _ := syscall.SyscallN(f.vtbl[vtblTaskFolderGetTask], uintptr(unsafe.Pointer(f)), uintptr(p), uintptr(unsafe.Pointer(&t)))
	if err := hresult(r); err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteTask deletes the task named name from the folder.
//
//	HRESULT DeleteTask(BSTR name, LONG flags);
//
// flags is reserved and 0 ("ITaskFolder::DeleteTask method", Microsoft
// Learn).
func (f *TaskFolder) DeleteTask(name string) error {
	n, err := newBSTR(name)
	if err != nil {
		return err
	}
	defer n.free()
	r, _, _ := syscall.SyscallN(f.vtbl[vtblTaskFolderDeleteTask], uintptr(unsafe.Pointer(f)), uintptr(n), 0)
	return hresult(r)
}

// RegisterTask registers (flags TASK_CREATE_OR_UPDATE: or replaces) the
// task at path from its XML, with userId, password and sddl VT_EMPTY: the
// principal is the task XML's, the credentials the caller's.
//
//	HRESULT RegisterTask(BSTR path, BSTR xmlText, LONG flags,
//	    VARIANT userId, VARIANT password, TASK_LOGON_TYPE logonType,
//	    VARIANT sddl, IRegisteredTask **ppTask);
//
// ("ITaskFolder::RegisterTask method", Microsoft Learn.) A success code
// that says the task may not start (SCHED_S_SOME_TRIGGERS_FAILED,
// SCHED_S_BATCH_LOGON_PROBLEM) comes back as warning, with the task
// registered (RegisterWarning).
func (f *TaskFolder) RegisterTask(path, xmlText string, flags int32, logonType int32) (task *RegisteredTask, warning, err error) {
	p, err := newBSTR(path)
	if err != nil {
		return nil, nil, err
	}
	defer p.free()
	x, err := newBSTR(xmlText)
	if err != nil {
		return nil, nil, err
	}
	defer x.free()
	var t *RegisteredTask
	r := f.registerTask(p, x, flags, logonType, unsafe.Pointer(&t))
	if err := hresult(r); err != nil {
		return nil, nil, err
	}
	return t, RegisterWarning(uint32(r)), nil
}

// registerTask makes the call, userId, password and sddl VT_EMPTY; task is
// the **IRegisteredTask the new task is stored in.
func (f *TaskFolder) registerTask(path, xmlText bstr, flags, logonType int32, task unsafe.Pointer) uintptr {
	fn := f.vtbl[vtblTaskFolderRegisterTask]
	if is32bit {
		r, _, _ := syscall.SyscallN(fn, uintptr(unsafe.Pointer(f)), uintptr(path), uintptr(xmlText), uintptr(flags),
			0, 0, 0, 0, // userId
			0, 0, 0, 0, // password
			uintptr(logonType),
			0, 0, 0, 0, // sddl
			uintptr(task))
		return r
	}
	v := newVariants(3)
	defer v.free()
	return f.registerTask64(fn, path, xmlText, flags, v.at(0), v.at(1), logonType, v.at(2), task)
}

func (f *TaskFolder) registerTask64(fn uintptr, path, xmlText bstr, flags int32, userID, password unsafe.Pointer, logonType int32, sddl, task unsafe.Pointer) uintptr {
	r, _, _ := syscall.SyscallN(fn, uintptr(unsafe.Pointer(f)), uintptr(path), uintptr(xmlText), uintptr(flags), uintptr(userID), uintptr(password), uintptr(logonType), uintptr(sddl), uintptr(task))
	return r
}

// RegisteredTask is IRegisteredTask ("IRegisteredTask interface
// (taskschd.h)", Microsoft Learn).
type RegisteredTask struct{ comObject }

// Release releases the object.
func (t *RegisteredTask) Release() { t.release() }

// XML is the task's definition as XML.
//
//	HRESULT get_Xml(BSTR *pXml);
//
// ("IRegisteredTask::get_Xml method", Microsoft Learn.)
func (t *RegisteredTask) XML() (string, error) {
	var x *uint16
	r, _, _ := syscall.SyscallN(t.vtbl[vtblRegisteredTaskGetXML], uintptr(unsafe.Pointer(t)), uintptr(unsafe.Pointer(&x)))
	if err := hresult(r); err != nil {
		takeBSTR(x)
		return "", err
	}
	return takeBSTR(x), nil
}

// Run runs the task now, with no parameters (VT_EMPTY), and releases the
// running instance it returns.
//
//	HRESULT Run(VARIANT params, IRunningTask **ppRunningTask);
//
// ("IRegisteredTask::Run method", Microsoft Learn.)
func (t *RegisteredTask) Run() error {
	var running *comObject
	if err := hresult(t.run(unsafe.Pointer(&running))); err != nil {
		return err
	}
	running.release()
	return nil
}

// run makes the call, params VT_EMPTY; running is the **IRunningTask the
// running instance is stored in.
func (t *RegisteredTask) run(running unsafe.Pointer) uintptr {
	fn := t.vtbl[vtblRegisteredTaskRun]
	if is32bit {
		r, _, _ := syscall.SyscallN(fn, uintptr(unsafe.Pointer(t)), 0, 0, 0, 0, uintptr(running))
		return r
	}
	v := newVariants(1)
	defer v.free()
	return t.run64(fn, v.at(0), running)
}

func (t *RegisteredTask) run64(fn uintptr, params, running unsafe.Pointer) uintptr {
	r, _, _ := syscall.SyscallN(fn, uintptr(unsafe.Pointer(t)), uintptr(params), uintptr(running))
	return r
}

// Stop stops the task's running instances.
//
//	HRESULT Stop(LONG flags);
//
// flags is reserved and 0 ("IRegisteredTask::Stop method", Microsoft
// Learn).
func (t *RegisteredTask) Stop() error {
	r, _, _ := syscall.SyscallN(t.vtbl[vtblRegisteredTaskStop], uintptr(unsafe.Pointer(t)), 0)
	return hresult(r)
}
