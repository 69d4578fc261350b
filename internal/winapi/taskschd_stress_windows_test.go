package winapi

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// fakeObject is a COM object in Go memory whose methods are machine code
// standing in for the Task Scheduler's: each writes through its
// out-parameter what the real method would (result, as an interface
// pointer; a BSTR of xml, from SysAllocString) and fails with E_FAIL if a
// VARIANT it is passed is not VT_EMPTY. They are native code, as COM's
// are, not Go callbacks: a callback runs on the calling goroutine's stack,
// which can grow (and so move) before the callback has written through
// its argument, whatever the caller did. Only Release, called once the
// out-parameter has been read, is a Go callback (one for the process:
// windows.NewCallback makes at most about 2000), and counts the releases.
type fakeObject struct {
	vtbl           *[32]uintptr // +0
	result         *fakeObject  // +8
	xml            *uint16      // +16
	sysAllocString uintptr      // +24
	releases       atomic.Int64
}

var (
	fakeOnce   sync.Once
	fakeVtable [32]uintptr
	fakeErr    error
	fakeXML    = windows.StringToUTF16("<Task/>")
)

// x64 machine code, in the x64 calling convention: this in RCX, then
// RDX, R8, R9, then the stack from [RSP+0x28] on entry.
var (
	asmResult   = []byte{0x48, 0x8B, 0x41, 0x08}                                           // mov rax, [rcx+8]
	asmEmpty    = []byte{0x45, 0x31, 0xDB}                                                 // xor r11d, r11d
	asmR10FromD = []byte{0x49, 0x89, 0xD2}                                                 // mov r10, rdx
	asmR10From8 = []byte{0x4D, 0x89, 0xC2}                                                 // mov r10, r8
	asmR10From9 = []byte{0x4D, 0x89, 0xCA}                                                 // mov r10, r9
	asmVariant  = []byte{0x4D, 0x0B, 0x1A, 0x4D, 0x0B, 0x5A, 0x08, 0x4D, 0x0B, 0x5A, 0x10} // or r11, [r10]; [r10+8]; [r10+16]
	asmStore    = []byte{0x49, 0x89, 0x02}                                                 // mov [r10], rax
	// xor eax, eax; mov ecx, E_FAIL; test r11, r11; cmovnz eax, ecx; ret
	asmReturn = []byte{0x31, 0xC0, 0xB9, 0x05, 0x40, 0x00, 0x80, 0x4D, 0x85, 0xDB, 0x0F, 0x45, 0xC1, 0xC3}
)

// asmR10FromStack is mov r10, [rsp+offset].
func asmR10FromStack(offset byte) []byte { return []byte{0x4C, 0x8B, 0x54, 0x24, offset} }

func newFakeVtable() (*[32]uintptr, error) {
	fakeOnce.Do(func() {
		join := func(parts ...[]byte) []byte {
			var code []byte
			for _, p := range parts {
				code = append(code, p...)
			}
			return code
		}
		methods := []struct {
			index int
			code  []byte
		}{
			// GetFolder(BSTR, ITaskFolder**), GetTask(BSTR,
			// IRegisteredTask**).
			{vtblTaskServiceGetFolder, join(asmEmpty, asmResult, asmR10From8, asmStore, asmReturn)},
			{vtblTaskFolderGetTask, join(asmEmpty, asmResult, asmR10From8, asmStore, asmReturn)},
			// RegisterTask(BSTR, BSTR, LONG, VARIANT userId, VARIANT
			// password, TASK_LOGON_TYPE, VARIANT sddl,
			// IRegisteredTask**).
			{vtblTaskFolderRegisterTask, join(asmEmpty,
				asmR10FromStack(0x28), asmVariant, asmR10FromStack(0x30), asmVariant, asmR10FromStack(0x40), asmVariant,
				asmResult, asmR10FromStack(0x48), asmStore, asmReturn)},
			// Run(VARIANT, IRunningTask**).
			{vtblRegisteredTaskRun, join(asmEmpty, asmR10FromD, asmVariant, asmResult, asmR10From8, asmStore, asmReturn)},
			// Connect(VARIANT, VARIANT, VARIANT, VARIANT).
			{vtblTaskServiceConnect, join(asmEmpty, asmR10FromD, asmVariant, asmR10From8, asmVariant, asmR10From9, asmVariant, asmR10FromStack(0x28), asmVariant, asmReturn)},
			// get_Xml(BSTR*): *out = SysAllocString(this.xml).
			{vtblRegisteredTaskGetXML, []byte{
				0x52,                   // push rdx
				0x48, 0x83, 0xEC, 0x20, // sub rsp, 0x20
				0x48, 0x8B, 0x41, 0x18, // mov rax, [rcx+24]
				0x48, 0x8B, 0x49, 0x10, // mov rcx, [rcx+16]
				0xFF, 0xD0, // call rax
				0x48, 0x83, 0xC4, 0x20, // add rsp, 0x20
				0x41, 0x5A, // pop r10
				0x49, 0x89, 0x02, // mov [r10], rax
				0x31, 0xC0, // xor eax, eax
				0xC3, // ret
			}},
		}
		const slot = 256
		mem, err := windows.VirtualAlloc(0, uintptr(len(methods)*slot), windows.MEM_COMMIT|windows.MEM_RESERVE, windows.PAGE_EXECUTE_READWRITE)
		if err != nil {
			fakeErr = err
			return
		}
		for i, m := range methods {
			addr := mem + uintptr(i*slot)
			if err := windows.WriteProcessMemory(windows.CurrentProcess(), addr, &m.code[0], uintptr(len(m.code)), nil); err != nil {
				fakeErr = err
				return
			}
			fakeVtable[m.index] = addr
		}
		fakeVtable[vtblRelease] = windows.NewCallback(func(this *fakeObject) uintptr {
			this.releases.Add(1)
			return 0
		})
	})
	return &fakeVtable, fakeErr
}

// atDepth calls f n frames down, so that the calls f makes start at every
// distance from the end of the goroutine's stack: one in the window
// between a pointer's conversion and the system call grows (copies) the
// stack there.
//
//go:noinline
func atDepth(n int, f func()) {
	if n > 0 {
		atDepth(n-1, f)
		return
	}
	f()
}

// TestCOMCallsUnderMovingStacks makes the COM calls, through the methods
// tickscope calls, from 20,000 goroutines whose stacks grow while a loop of
// runtime.GC shrinks them, and checks that every out-parameter was
// written and every VARIANT read was VT_EMPTY (a method that reads
// another fails). A pointer converted to
// uintptr before the system call's own argument list (unsafe.Pointer's
// rule 4) points at the old stack once the stack is copied in between:
// the method then returns S_OK and nil, or an empty string.
func TestCOMCallsUnderMovingStacks(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fake COM methods are x64 machine code")
	}
	if off := [...]uintptr{unsafe.Offsetof(fakeObject{}.result), unsafe.Offsetof(fakeObject{}.xml), unsafe.Offsetof(fakeObject{}.sysAllocString)}; off != [...]uintptr{8, 16, 24} {
		t.Fatalf("fakeObject's fields at %v, the machine code reads them at 8, 16, 24", off)
	}
	vtbl, err := newFakeVtable()
	if err != nil {
		t.Fatal(err)
	}
	if err := procSysAllocString.Find(); err != nil {
		t.Fatal(err)
	}
	result := &fakeObject{vtbl: vtbl}
	object := &fakeObject{vtbl: vtbl, result: result, xml: &fakeXML[0], sysAllocString: procSysAllocString.Addr()}
	service := (*TaskService)(unsafe.Pointer(object))
	folder := (*TaskFolder)(unsafe.Pointer(object))
	task := (*RegisteredTask)(unsafe.Pointer(object))
	want := unsafe.Pointer(result)

	const methods = 5
	calls := []func() bool{
		func() bool {
			f, err := service.GetFolder(`\`)
			return err == nil && unsafe.Pointer(f) == want
		},
		func() bool {
			x, err := folder.GetTask("tickscope")
			return err == nil && unsafe.Pointer(x) == want
		},
		func() bool {
			x, warning, err := folder.RegisterTask("tickscope", "<Task/>", TASK_CREATE_OR_UPDATE, TASK_LOGON_INTERACTIVE_TOKEN)
			return err == nil && warning == nil && unsafe.Pointer(x) == want
		},
		func() bool {
			x, err := task.XML()
			return err == nil && x == "<Task/>"
		},
		func() bool {
			// Run's out-parameter is released, not returned: the
			// releases of result are counted below.
			return task.Run() == nil && service.Connect() == nil
		},
	}

	stop := make(chan struct{})
	var gc sync.WaitGroup
	gc.Add(1)
	go func() {
		defer gc.Done()
		for {
			select {
			case <-stop:
				return
			default:
				runtime.GC()
			}
		}
	}()

	const goroutines = 20000
	var failed [methods]atomic.Int64
	var runs atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := g % methods
			if m == methods-1 {
				runs.Add(1)
			}
			atDepth(g/methods%512, func() {
				if !calls[m]() {
					failed[m].Add(1)
				}
			})
		}()
	}
	wg.Wait()
	close(stop)
	gc.Wait()

	for m, name := range []string{"GetFolder", "GetTask", "RegisterTask", "XML", "Run and Connect"} {
		if n := failed[m].Load(); n != 0 {
			t.Errorf("%s: %d of %d calls failed: S_OK with no result, or a VARIANT not VT_EMPTY", name, n, goroutines/methods)
		}
	}
	if got, want := result.releases.Load(), runs.Load(); got != want {
		t.Errorf("Run: %d of %d running instances released: the rest of the out-parameters stayed nil", got, want)
	}
}
