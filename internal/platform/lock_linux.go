package platform

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/seam"
)

// wholeFile is a write lock on the whole file: an open file description
// lock (fcntl(2), F_OFD_SETLK, Linux 3.15+). Like flock it belongs to the
// open file, so the kernel drops it when its holder exits however it
// exits, and closing another descriptor of the same file (a probe's) does
// not drop it; unlike flock it can be tested without being taken
// (F_OFD_GETLK).
func wholeFile() *unix.Flock_t { return &unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart} }

// tryLock takes f's lock without waiting; busy is another's holding it.
func tryLock(f *os.File) (busy bool, err error) {
	err = unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, wholeFile())
	switch {
	case errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES):
		return true, nil
	case err != nil:
		return false, &seam.OSError{Call: "lock " + f.Name() + " (fcntl F_OFD_SETLK)", Err: err}
	}
	return false, nil
}

// probeLock tells whether a process holds the lock name in d, and what
// its record says, without taking the lock, even for an instant (a holder
// starting then would be refused): it opens the file read-only and asks
// the kernel whether a write lock could be placed (F_OFD_GETLK), which
// places none.
func probeLock(d lockDir, name string) (h heldLock, held bool, err error) {
	dirfd, err := openLockDir(d, false)
	if err != nil {
		return heldLock{}, false, err
	}
	defer unix.Close(dirfd)
	f, err := openRecord(dirfd, d, name, false)
	if err != nil {
		return heldLock{}, false, err
	}
	defer f.Close()
	lk := wholeFile()
	if err := unix.FcntlFlock(f.Fd(), unix.F_OFD_GETLK, lk); err != nil {
		return heldLock{}, false, &seam.OSError{Call: "test the lock " + f.Name() + " (fcntl F_OFD_GETLK)", Err: err}
	}
	if lk.Type == unix.F_UNLCK {
		return heldLock{}, false, nil
	}
	return heldLock{PID: readRecordFile(f), Writer: uidString(d.Owner), Record: f.Name()}, true, nil
}

// heldHolder probes the startup holder's lock where it may be.
func heldHolder() (heldLock, bool) {
	for _, d := range holderLockDirs() {
		if h, held, err := probeLock(d, seam.HolderLock); err == nil && held {
			return h, true
		}
	}
	return heldLock{}, false
}

func (system) Holder() (pid int, running bool) {
	h, running := heldHolder()
	return h.PID, running
}

// endRecordedHolder ends the process the holder's record names with
// SIGTERM once it has passed mayEnd. The process is pinned first by a
// pidfd (pidfd_open(2), Linux 5.3+), and signalled through it
// (pidfd_send_signal(2)): were the holder to exit and its id to be reused
// after the check, the signal would go to no one rather than to the
// newcomer. An older kernel gets kill(2).
func endRecordedHolder(h heldLock) error {
	pidfd, err := unix.PidfdOpen(h.PID, 0)
	switch {
	case errors.Is(err, unix.ESRCH):
		return fmt.Errorf("the holder's record %s names process %d, which does not run: nothing was ended", h.Record, h.PID)
	case err == nil:
		defer unix.Close(pidfd)
	case errors.Is(err, unix.ENOSYS):
		pidfd = -1
	default:
		return &seam.OSError{Call: fmt.Sprintf("pidfd_open(%d)", h.PID), Err: err}
	}
	p, err := readProcess(h.PID)
	if err != nil {
		return fmt.Errorf("not ending process %d, which the holder's record %s names: %w", h.PID, h.Record, err)
	}
	self, err := os.Executable()
	if err != nil {
		return &seam.OSError{Call: "find this executable", Err: err}
	}
	if err := mayEnd(p, h, []string{self}, sameExecutable(h.PID), uidString(os.Geteuid())); err != nil {
		return err
	}
	if pidfd >= 0 {
		err = unix.PidfdSendSignal(pidfd, unix.SIGTERM, nil, 0)
	} else {
		err = unix.Kill(h.PID, unix.SIGTERM)
	}
	if err != nil {
		return &seam.OSError{Call: fmt.Sprintf("send SIGTERM to process %d", h.PID), Err: err}
	}
	return nil
}

// readProcess reads what process pid runs (/proc/PID/exe, which names the
// executable even once its file was replaced, with " (deleted)" after it)
// and as whom (its effective uid, /proc/PID/status).
func readProcess(pid int) (recordedProcess, error) {
	dir := "/proc/" + strconv.Itoa(pid)
	exe, err := os.Readlink(dir + "/exe")
	if err != nil {
		return recordedProcess{}, &seam.OSError{Call: "read " + dir + "/exe", Err: err}
	}
	f, err := os.Open(dir + "/status")
	if err != nil {
		return recordedProcess{}, &seam.OSError{Call: "read " + dir + "/status", Err: err}
	}
	defer f.Close()
	uid, err := effectiveUID(f)
	if err != nil {
		return recordedProcess{}, &seam.OSError{Call: "read " + dir + "/status", Err: err}
	}
	return recordedProcess{PID: pid, Exe: exe, Owner: uidString(uid)}, nil
}

// effectiveUID reads the effective uid from a /proc/PID/status: the second
// field of its Uid line (real, effective, saved, file system; proc(5)).
func effectiveUID(status io.Reader) (int, error) {
	s := bufio.NewScanner(status)
	for s.Scan() {
		if rest, ok := strings.CutPrefix(s.Text(), "Uid:"); ok {
			fields := strings.Fields(rest)
			if len(fields) < 2 {
				break
			}
			return strconv.Atoi(fields[1])
		}
	}
	return 0, errors.New("no Uid line")
}

// sameExecutable compares process pid's executable with a path by the file
// itself (device and inode, as /proc/PID/exe is followed to the file the
// process runs), or, for a holder whose file was replaced since it
// started (an upgrade), by the path /proc gives it.
func sameExecutable(pid int) func(exe, allowed string) bool {
	return func(exe, allowed string) bool {
		running, err1 := os.Stat("/proc/" + strconv.Itoa(pid) + "/exe")
		want, err2 := os.Stat(allowed)
		if err1 == nil && err2 == nil && os.SameFile(running, want) {
			return true
		}
		return strings.TrimSuffix(exe, " (deleted)") == allowed
	}
}

// holderLockDirs are where a probe looks for the startup holder: the
// caller's own directory, then, for a user other than root, root's (a
// holder systemd starts runs as root).
func holderLockDirs() []lockDir {
	own, err := thisLockDir()
	var dirs []lockDir
	if err == nil {
		dirs = append(dirs, own)
	}
	if os.Geteuid() != 0 && os.Getenv(RuntimeDirEnv) == "" {
		dirs = append(dirs, machineLockDir())
	}
	return dirs
}

// uidString is how a uid is named in a refusal.
func uidString(uid int) string { return "uid " + strconv.Itoa(uid) }
