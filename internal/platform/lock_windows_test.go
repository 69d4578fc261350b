package platform

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/seam"
)

// What Windows answers for a lock's mutex; these run on Windows (and under
// Wine, which the report says are not Windows' answers).

func mutexExists(t *testing.T, name string) bool {
	t.Helper()
	p, _ := windows.UTF16PtrFromString(name)
	h, err := windows.OpenMutex(windows.SYNCHRONIZE, false, p)
	if err == nil {
		windows.CloseHandle(h)
		return true
	}
	if !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		t.Fatalf("OpenMutexW(%s): %v", name, err)
	}
	return false
}

// The who lock guards a machine-wide ETW session name: its mutex is in the
// global namespace, not the terminal session's.
func TestWhoLockIsMachineWide(t *testing.T) {
	if mutexExists(t, `Global\tickscope-who`) {
		t.Skip("another tickscope reads who holds the timer")
	}
	release, err := (system{}).Lock(seam.WhoLock)
	if err != nil {
		t.Fatal(err)
	}
	if !mutexExists(t, `Global\tickscope-who`) {
		t.Error(`no Global\tickscope-who while the who lock is held`)
	}
	if mutexExists(t, `Local\tickscope-who`) {
		t.Error(`Local\tickscope-who exists: the who lock is per session`)
	}
	release()
	if mutexExists(t, `Global\tickscope-who`) {
		t.Error(`Global\tickscope-who outlives its release`)
	}
}

// The record of a held lock is under the user's profile, never in the
// temporary directory, and goes with the lock.
func TestLockRecordIsUnderTheProfile(t *testing.T) {
	local, err := windows.KnownFolderPath(windows.FOLDERID_LocalAppData, windows.KF_FLAG_DEFAULT)
	if err != nil {
		t.Fatal(err)
	}
	name := "test-" + t.Name()
	record := filepath.Join(local, "tickscope", name+".pid")
	release, err := (system{}).Lock(name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(record)
	if err != nil || string(data) != strconv.Itoa(os.Getpid())+"\n" {
		t.Errorf("%s holds %q (%v), want this process's id", record, data, err)
	}
	if _, err := os.Stat(filepath.Join(os.TempDir(), "tickscope-"+name+".lock")); err == nil {
		t.Errorf("a lock file in %s", os.TempDir())
	}
	release()
	if _, err := os.Stat(record); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s outlives its lock: %v", record, err)
	}
}

// A mutex of the lock's name whose security descriptor denies this
// process even SYNCHRONIZE (an elevated holder's, seen from a process that
// is not elevated) is held: CreateMutexW and OpenMutexW fail with
// ERROR_ACCESS_DENIED on it.
func TestAMutexThatDeniesAccessIsHeld(t *testing.T) {
	if _, running := (system{}).Holder(); running {
		t.Skip("a startup holder runs on this machine")
	}
	sd, err := windows.SecurityDescriptorFromString("D:(D;;GA;;;WD)") // deny everyone everything
	if err != nil {
		t.Fatal(err)
	}
	sa := &windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	name, _ := windows.UTF16PtrFromString(mutexName(seam.HolderLock))
	h, err := windows.CreateMutex(sa, false, name)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(h)
	if _, running := (system{}).Holder(); !running {
		t.Error("Holder: a mutex that denies access is not held")
	}
	var locked *seam.LockedError
	if _, err := (system{}).Lock(seam.HolderLock); !errors.As(err, &locked) {
		t.Errorf("Lock on a mutex that denies access: %v, want a LockedError", err)
	}
}

// A record that names a process other than this tickscope's is refused,
// saying why, and the process is not ended.
func TestEndHolderRefusesAProcessThatIsNotTickscope(t *testing.T) {
	if _, running := (system{}).Holder(); running {
		t.Skip("a startup holder runs on this machine")
	}
	victim := exec.Command("ping", "-n", "30", "127.0.0.1")
	if err := victim.Start(); err != nil {
		t.Skipf("no ping to start: %v", err)
	}
	defer victim.Process.Kill()
	release, err := (system{}).Lock(seam.HolderLock)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := writeRecordFileFor(victim.Process.Pid); err != nil {
		t.Fatal(err)
	}
	err = endHolder()
	want := "not ending process " + strconv.Itoa(victim.Process.Pid) + ", which the holder's record "
	if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "not this tickscope") {
		t.Errorf("endHolder: %v, want a refusal starting %q", err, want)
	}
	exited := make(chan error, 1)
	go func() { exited <- victim.Wait() }()
	select {
	case err := <-exited:
		t.Errorf("the process the record named exited: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
}

// writeRecordFileFor forges the holder's record: it names pid.
func writeRecordFileFor(pid int) error {
	dir, err := recordDir(false)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, seam.HolderLock+".pid"), formatRecord(pid), 0o644)
}

// TestWriteRecordFileReadsItsAttributes: writing a record opens it for
// writing and then reads its attributes (GetFileInformationByHandle) to
// refuse a link, which needs FILE_READ_ATTRIBUTES: GENERIC_WRITE alone
// does not grant it, and the check would then refuse every record.
func TestWriteRecordFileReadsItsAttributes(t *testing.T) {
	// Not t.TempDir: Wine 8 fails Go's RemoveAll of it.
	dir, err := os.MkdirTemp("", "tickscope-record")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "test.pid")
	t.Cleanup(func() { os.Remove(path); os.Remove(dir) })
	if err := writeRecordFile(path); err != nil {
		t.Fatalf("writeRecordFile: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := parseRecord(data); got != os.Getpid() {
		t.Errorf("the record names %d, want this process, %d", got, os.Getpid())
	}
}
