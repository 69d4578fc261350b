//go:build unix

package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/options"
)

// heldDir is the output's directory, held open from Open to Commit: every
// operation on a name in it (the trial of the final name, the temporary
// file, the check of what the name is now, the link, the rename, the
// sweep, the removal of a temporary) is relative to the descriptor, never
// by the directory's name, so that whoever owns a directory on the way and
// swaps it for a symlink during the run cannot choose where the file goes
// or which file is removed.
type heldDir struct{ f *os.File }

// openDir opens dir, its symlinks resolved under the protected_symlinks
// rule, then opened without following any link (openDirNoFollow): a
// directory on the way swapped for a symlink between the two is refused.
func openDir(dir string) (heldDir, error) {
	resolved, err := followLinks(dir)
	if err != nil {
		return heldDir{}, err
	}
	testHook("resolved")
	f, err := openDirNoFollow(resolved)
	return heldDir{f}, err
}

func (d heldDir) path() string { return d.f.Name() }

func (d heldDir) fd() int { return int(d.f.Fd()) }

// check fails when the directory's name no longer names the directory
// held: it was renamed away and something else, a symlink to another
// directory say, put in its place. The file is then written nowhere.
func (d heldDir) check() error {
	held, err := d.f.Stat()
	if err != nil {
		return err
	}
	now, err := openDirNoFollow(d.path())
	if err != nil {
		what := "gone"
		if fi, lerr := os.Lstat(d.path()); lerr == nil {
			what = options.FileKind(fi.Mode())
		}
		return fmt.Errorf("the directory %s was replaced during the run (it is now %s); another user may have swapped it to choose where the file goes, so nothing was written", d.path(), what)
	}
	defer now.Close()
	fi, err := now.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(held, fi) {
		return fmt.Errorf("the directory %s was replaced during the run by another directory; another user may have swapped it to choose where the file goes, so nothing was written", d.path())
	}
	return nil
}

// createNamed creates a temporary file of tickscope's in the directory,
// under a name no other file has (O_EXCL).
func (d heldDir) createNamed(flag string) (*os.File, error) {
	for range 10000 {
		base := tempPrefix + flag + "-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err := unix.Openat(d.fd(), base, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), filepath.Join(d.path(), base)), nil
		case !errors.Is(err, unix.EEXIST):
			return nil, &os.PathError{Op: "openat", Path: filepath.Join(d.path(), base), Err: err}
		}
	}
	return nil, errors.New("no free temporary name in " + d.path())
}

// tryName creates and removes the last name of path in the directory when
// it does not exist yet, so that a name the directory cannot hold (over
// 255 bytes on most file systems) is refused before the measurement
// instead of at the rename after it. O_EXCL guarantees the file removed is
// the one created here.
func (d heldDir) tryName(path string) error {
	base := filepath.Base(path)
	fd, err := unix.Openat(d.fd(), base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	switch {
	case errors.Is(err, unix.EEXIST):
		return nil // it exists, so its name fits: Target checked its type
	case err != nil:
		return err
	}
	unix.Close(fd)
	return unix.Unlinkat(d.fd(), base, 0)
}

// mode is the type of what the last name of path is in the directory now,
// a symlink not followed.
func (d heldDir) mode(path string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(d.fd(), filepath.Base(path), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	return fileType(uint32(st.Mode)), nil
}

// fileType is the fs.FileMode type of a stat mode.
func fileType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// owner is what gives the written temporary file the owner and mode of
// the file it replaces, path's last name in the directory now: its owner
// and group (as root; another user changes the group where it may, and
// keeps the file otherwise) and its permission bits (set-id and sticky
// bits dropped), so that replacing nobody's 0664 report leaves nobody's
// 0664 report. A new file gets what any file the caller creates gets,
// 0666 less the umask: the temporaries are made 0600, so that nobody reads
// one half written, and opened up only when whole.
//
// A file the protected_regular rule does not trust (trusted: in a sticky
// directory every user can write, owned by neither the caller nor the
// directory's owner) is replaced as a new file is, the caller's own with
// 0666 less the umask: anyone may have made it there, and its owner and
// mode, taken over, would let them choose who can write root's report
// (mallory's 0666 /tmp/report.html, kept as hers, is a page she edits
// before root opens it). It is replaced, not refused, because the rename
// writes nothing through it, unlike OpenAppend, which refuses it.
func (d heldDir) owner(path string) func(*os.File) error {
	newFile := func(f *os.File) error { return f.Chmod(fs.FileMode(0o666 &^ umask())) }
	var st unix.Stat_t
	err := unix.Fstatat(d.fd(), filepath.Base(path), &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return newFile
	}
	di, err := d.f.Stat()
	if err != nil {
		return newFile
	}
	if ok, err := trusted(di, st.Uid); err != nil || !ok {
		return newFile
	}
	uid, gid, perm := int(st.Uid), int(st.Gid), fs.FileMode(st.Mode&0o777)
	return func(f *os.File) error {
		// Before the mode: chown may clear bits of it.
		if uid != os.Geteuid() || gid != os.Getegid() {
			if f.Chown(uid, gid) != nil {
				f.Chown(-1, gid) // a group the caller is in; or none
			}
		}
		return f.Chmod(perm)
	}
}

// procStatus is where Linux tells a process its umask; tests name a file
// that is not there, as on macOS.
var procStatus = "/proc/self/status"

// umask is the process's file mode creation mask: /proc/self/status's
// Umask line on Linux, read without changing it; else (macOS, a Linux
// before 4.7) the mask the process started with, startUmask.
func umask() uint32 {
	if m, ok := procUmask(); ok {
		return m
	}
	return startUmask
}

// startUmask is the umask when the program started, for an OS that tells
// it only by setting another (umask(2) returns the old mask): it is set to
// 077 and back once, while the packages are initialized, before main
// starts any goroutine that could create a file in that moment and get
// 0600 for 0644. tickscope never sets the umask itself, so that the mask
// it started with is the mask.
var startUmask = func() uint32 {
	if m, ok := procUmask(); ok {
		return m
	}
	old := unix.Umask(0o077)
	unix.Umask(old)
	return uint32(old)
}()

// procUmask is the Umask line of /proc/self/status, where the kernel has
// one.
func procUmask() (uint32, bool) {
	status, err := os.ReadFile(procStatus)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "Umask:"); ok {
			if m, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return uint32(m), true
			}
		}
	}
	return 0, false
}

// rename renames the file named old in the directory over the name of
// path, both relative to the directory held.
func (d heldDir) rename(old, path string) error {
	if err := unix.Renameat(d.fd(), filepath.Base(old), d.fd(), filepath.Base(path)); err != nil {
		return &os.LinkError{Op: "renameat", Old: old, New: path, Err: err}
	}
	return nil
}

// remove removes the file named name from the directory held.
func (d heldDir) remove(name string) {
	unix.Unlinkat(d.fd(), filepath.Base(name), 0)
}

func (d heldDir) close() {
	if d.f != nil {
		d.f.Close()
	}
}
