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
// declares them; the indexes below are those positions.

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

// call calls the vtable method at index with the object as its first
// argument.
func (o *comObject) call(index int, args ...uintptr) uintptr {
	r, _, _ := syscall.SyscallN(o.vtbl[index], append([]uintptr{uintptr(unsafe.Pointer(o))}, args...)...)
	return r
}

// release is IUnknown::Release (vtable index 2).
func (o *comObject) release() {
	if o != nil {
		o.call(2)
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

// emptyVariants gives the argument words of n VT_EMPTY VARIANTs passed by
// value, and the memory they point to, which the caller keeps alive until
// the call returns. On x64 and ARM64 an argument larger than 8 (x64) or
// 16 (ARM64) bytes is passed as a pointer to a copy the caller makes,
// 16-byte aligned on x64 ("x64 calling convention", "Overview of ARM64 ABI
// conventions", Microsoft Learn); on x86 it is pushed whole, four zero
// words. VT_EMPTY is all zeros ("VARIANT structure", Microsoft Learn).
func emptyVariants(n int) (words []uintptr, memory []byte) {
	if unsafe.Sizeof(uintptr(0)) == 4 {
		return make([]uintptr, 4*n), nil
	}
	const stride = 32 // variantSize rounded up to keep each copy aligned
	memory = make([]byte, n*stride+16)
	base := unsafe.Pointer(&memory[0])
	offset := (16 - uintptr(base)%16) % 16
	for i := range n {
		words = append(words, uintptr(unsafe.Add(base, offset+uintptr(i*stride))))
	}
	return words, memory
}

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
// ("ITaskService::Connect method", Microsoft Learn; vtable index 10.)
func (s *TaskService) Connect() error {
	words, memory := emptyVariants(4)
	r := s.call(10, words...)
	runtime.KeepAlive(memory)
	return hresult(r)
}

// GetFolder returns the folder at path ("\" is the root).
//
//	HRESULT GetFolder(BSTR path, ITaskFolder **ppFolder);
//
// ("ITaskService::GetFolder method", Microsoft Learn; vtable index 7.)
func (s *TaskService) GetFolder(path string) (*TaskFolder, error) {
	p, err := newBSTR(path)
	if err != nil {
		return nil, err
	}
	defer p.free()
	var f *TaskFolder
	if err := hresult(s.call(7, uintptr(p), uintptr(unsafe.Pointer(&f)))); err != nil {
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
// ("ITaskFolder::GetTask method", Microsoft Learn; vtable index 13.)
func (f *TaskFolder) GetTask(path string) (*RegisteredTask, error) {
	p, err := newBSTR(path)
	if err != nil {
		return nil, err
	}
	defer p.free()
	var t *RegisteredTask
	if err := hresult(f.call(13, uintptr(p), uintptr(unsafe.Pointer(&t)))); err != nil {
		return nil, err
	}
	return t, nil
}

// DeleteTask deletes the task named name from the folder.
//
//	HRESULT DeleteTask(BSTR name, LONG flags);
//
// flags is reserved and 0 ("ITaskFolder::DeleteTask method", Microsoft
// Learn; vtable index 15).
func (f *TaskFolder) DeleteTask(name string) error {
	n, err := newBSTR(name)
	if err != nil {
		return err
	}
	defer n.free()
	return hresult(f.call(15, uintptr(n), 0))
}

// RegisterTask registers (flags TASK_CREATE_OR_UPDATE: or replaces) the
// task at path from its XML, with userId, password and sddl VT_EMPTY: the
// principal is the task XML's, the credentials the caller's.
//
//	HRESULT RegisterTask(BSTR path, BSTR xmlText, LONG flags,
//	    VARIANT userId, VARIANT password, TASK_LOGON_TYPE logonType,
//	    VARIANT sddl, IRegisteredTask **ppTask);
//
// ("ITaskFolder::RegisterTask method", Microsoft Learn; vtable index 16.)
func (f *TaskFolder) RegisterTask(path, xmlText string, flags int32, logonType int32) (*RegisteredTask, error) {
	p, err := newBSTR(path)
	if err != nil {
		return nil, err
	}
	defer p.free()
	x, err := newBSTR(xmlText)
	if err != nil {
		return nil, err
	}
	defer x.free()
	words, memory := emptyVariants(3)
	per := len(words) / 3
	userID, password, sddl := words[:per], words[per:2*per], words[2*per:]
	var t *RegisteredTask
	args := []uintptr{uintptr(p), uintptr(x), uintptr(flags)}
	args = append(args, userID...)
	args = append(args, password...)
	args = append(args, uintptr(logonType))
	args = append(args, sddl...)
	args = append(args, uintptr(unsafe.Pointer(&t)))
	r := f.call(16, args...)
	runtime.KeepAlive(memory)
	if err := hresult(r); err != nil {
		return nil, err
	}
	return t, nil
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
// ("IRegisteredTask::get_Xml method", Microsoft Learn; vtable index 20.)
func (t *RegisteredTask) XML() (string, error) {
	var x *uint16
	if err := hresult(t.call(20, uintptr(unsafe.Pointer(&x)))); err != nil {
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
// ("IRegisteredTask::Run method", Microsoft Learn; vtable index 12.)
func (t *RegisteredTask) Run() error {
	words, memory := emptyVariants(1)
	var running *comObject
	r := t.call(12, append(words, uintptr(unsafe.Pointer(&running)))...)
	runtime.KeepAlive(memory)
	if err := hresult(r); err != nil {
		return err
	}
	running.release()
	return nil
}

// Stop stops the task's running instances.
//
//	HRESULT Stop(LONG flags);
//
// flags is reserved and 0 ("IRegisteredTask::Stop method", Microsoft
// Learn; vtable index 23).
func (t *RegisteredTask) Stop() error { return hresult(t.call(23, 0)) }
