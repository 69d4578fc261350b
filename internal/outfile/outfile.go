// Package outfile is the one rule for every file tickscope writes (--raw,
// --html, --cyclictest-json, --histfile; watch --log through OpenAppend,
// which appends instead of replacing): the path is checked and a temporary file
// is created in the target directory before anything is measured, so that
// a path that cannot be written is a usage error at once instead of a
// failure after the measurement, and the result is stored atomically (the
// temporary file is written, synced and renamed over the path), so that a
// reader never sees half a file. On Linux the temporary file has no name
// until it is written (O_TMPFILE), so that a killed run leaves nothing
// behind; elsewhere, or where the file system cannot, it is named, and
// the named ones earlier runs left are swept before writing.
//
// Only regular files are written. An existing path that is anything else
// (a directory, a character or block device, a FIFO, a socket, or a
// symlink to one of those) is refused: renaming over /dev/null, as root,
// would replace the device node with a JSON file. A symlink to a regular
// file is followed, so that its target is the file replaced, except where
// another user could have planted it: every symlink on the way to the file
// is held to the kernel's fs.protected_symlinks rule (in a sticky directory
// every user can write, only a link owned by the caller or the directory's
// owner is followed), whatever the sysctl says, because tickscope resolves
// the link itself and renames over its target, which the kernel never
// sees.
//
// No output file is this run's own standard output or standard error,
// whatever it is (a pipe, a terminal, the file a shell's >> opened) and by
// whatever name (/dev/stdout, /proc/self/fd/1, the file's own name, a link
// to it): the file itself is compared with the streams' (os.SameFile:
// device and inode, or volume and file index; on Windows, which gives a
// pipe, a console or NUL no identity, only when both are regular files),
// and such a path is refused (StreamError). Writing through the stream is what curl -o /dev/stdout
// does, and it works for curl because nothing else goes there; every
// tickscope command prints its report on standard output and its progress
// on standard error, so the output would be mixed with them, and renaming
// over the path would replace the file the shell opened (its earlier
// lines gone, the report written to the unlinked old file).
//
// A file replaced keeps its owner, group and permission bits (on Unix;
// set-id and sticky bits dropped): the rename puts a new file in its
// place, which would otherwise be root's and 0600, so that the user who
// asked root for a report in their own file could no longer read it.
// Another user keeps the file when the caller may give it (root), and its
// group where the caller is in it. A new file gets 0666 less the umask,
// as a file made by the shell's > would: the temporary is made 0600, so
// that nobody reads it half written, and given its mode only when whole.
// A file anyone could have planted (the protected_regular rule: in a
// sticky directory every user can write, owned by neither the caller nor
// the directory's owner) is replaced as a new file is, the caller's own:
// another user's 0666 /tmp/report.html, kept, would be root's report that
// user can edit.
// Windows carries neither over: a new file takes its ACL from the
// directory.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/tickscope/tickscope/internal/options"
)

// File is an output file opened before the measurement. The File of an
// empty path writes nothing.
type File struct {
	flag string
	// path is the file replaced: the named path, or a symlink's target.
	path string
	tmp  *os.File
	// dir is path's directory, as Open found it: Commit puts the file
	// there and nowhere else.
	dir heldDir
	// unnamed is set when tmp has no name (Linux's O_TMPFILE): Commit
	// links it under a temporary name only to rename it into place, so
	// that a run killed before then leaves nothing behind.
	unnamed bool
}

// tempPrefix starts the name of every temporary file tickscope makes
// beside an output, ".tickscope-raw-123456": a dot hides it from ls, and
// sweepStale knows its own by it.
const tempPrefix = ".tickscope-"

// staleTemp matches the name of a temporary file of tickscope's: the
// prefix, the flag's name and random digits (os.CreateTemp's and
// linkTemp's).
var staleTemp = regexp.MustCompile(`^\.tickscope-[a-z]+(-[a-z]+)*-[0-9]+$`)

// tryUnnamed is cleared by tests, to take the named temporaries of file
// systems without O_TMPFILE.
var tryUnnamed = true

// runStart is when this run began: a temporary file of tickscope's last
// written before it is left from an earlier run (sweepStale).
var runStart = time.Now()

// testHook is called at each stage a test may change the file system
// between: "resolved" (the directory's links resolved, not yet opened),
// "opened" (the directory held), "checked" (Commit found the directory
// the same).
var testHook = func(stage string) {}

// createTemp creates the temporary file in dir: unnamed where the OS and
// the file system can (O_TMPFILE), named otherwise. Either is locked
// (flock, where the OS has it) while this run holds it, so that another
// run's sweepStale leaves it alone.
func createTemp(dir heldDir, flag string) (*os.File, bool, error) {
	if tryUnnamed {
		if f, err := createUnnamed(dir); err == nil {
			lockTemp(f)
			return f, true, nil
		}
	}
	f, err := dir.createNamed(flag)
	if err != nil {
		return nil, false, err
	}
	lockTemp(f)
	return f, false, nil
}

// Open checks the output file named by --flag and creates its temporary
// file next to it. Every refusal is a usage error naming the flag, the
// path and what is allowed.
func Open(flag, path string) (*File, error) {
	o := &File{flag: flag, path: path}
	if path == "" {
		return o, nil
	}
	bad := func(format string, args ...any) error {
		return options.BadFlag(flag, path, format, args...)
	}
	final, err := Target(path)
	var notRegular *NotRegularError
	var untrusted *UntrustedLinkError
	var stream *StreamError
	switch {
	case errors.As(err, &notRegular):
		return nil, bad("%v; tickscope writes only regular files", err)
	case errors.As(err, &untrusted), errors.As(err, &stream):
		return nil, bad("%v", err)
	case err != nil:
		return nil, bad("cannot write there: %v", err)
	}
	o.path = final
	if o.dir, err = openDir(filepath.Dir(final)); err != nil {
		if errors.As(err, &untrusted) {
			return nil, bad("%v", err)
		}
		return nil, bad("cannot write there: %v", UnwrapPath(err))
	}
	testHook("opened")
	sweepStale(o.dir)
	if o.tmp, o.unnamed, err = createTemp(o.dir, flag); err != nil {
		o.dir.close()
		return nil, bad("cannot write there: %v", UnwrapPath(err))
	}
	if err := o.dir.tryName(final); err != nil {
		o.Close()
		return nil, bad("cannot write there: %v", err)
	}
	return o, nil
}

// Target is the file that writing to path would replace: path itself, or
// the target of a symlink. It is an error when that exists and is not a
// regular file, when path is a symlink to nothing, or when it is this
// run's standard output or standard error (a *StreamError), whatever that
// is: a regular file the shell opened is not replaced either.
func Target(path string) (string, error) {
	if err := ownStream(path); err != nil {
		return "", err
	}
	// Every symlink on the way is checked, the last name's and its
	// directories' alike: a link to a directory redirects the file as
	// surely as a link to the file, also one not created yet.
	var untrusted *UntrustedLinkError
	li, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if _, err := followLinks(filepath.Dir(path)); errors.As(err, &untrusted) {
			return "", err
		}
		return path, nil // a directory that cannot be written is Open's to say
	case err != nil:
		return "", UnwrapPath(err)
	}
	resolved, err := followLinks(path)
	switch {
	case errors.As(err, &untrusted):
		return "", err
	case err != nil && li.Mode()&fs.ModeSymlink != 0:
		return "", &NotRegularError{"it is a symlink to a missing or unreadable path"}
	case err != nil:
		return "", UnwrapPath(err)
	}
	final := path
	if li.Mode()&fs.ModeSymlink != 0 {
		final = resolved
	}
	fi, err := os.Stat(final)
	if err != nil {
		return "", UnwrapPath(err)
	}
	if !fi.Mode().IsRegular() {
		what := options.FileKind(fi.Mode())
		if final != path {
			return "", &NotRegularError{fmt.Sprintf("it is a symlink to %s (%s)", what, final)}
		}
		return "", &NotRegularError{"it is " + what}
	}
	return final, nil
}

// UntrustedLinkError says that an output path passes through a symlink
// that another user could have planted: one in a sticky directory every
// user can write (/tmp), owned by neither the caller nor the directory's
// owner. Following it would let that user choose which of the caller's
// files is replaced; the kernel's fs.protected_symlinks refuses such a
// link for the same reason.
type UntrustedLinkError struct {
	// Link is the symlink, Dir its directory, Owner who owns the link.
	Link, Dir, Owner string
}

func (e *UntrustedLinkError) Error() string {
	return fmt.Sprintf("%s is a symlink owned by %s in %s, a sticky directory every user can write, and neither you nor the directory's owner made it; another user may have planted it to choose the file replaced, so it is not followed (the kernel's fs.protected_symlinks rule)",
		e.Link, e.Owner, e.Dir)
}

// NotRegularError says that an output path exists and is not a regular
// file (or a symlink to one).
type NotRegularError struct{ What string }

func (e *NotRegularError) Error() string { return e.What }

// OpenAppend opens the file named by --flag for appending, creating it
// (watch --log, which grows one file instead of replacing it). It follows
// the rule Open follows: only a regular file or a symlink to one, every
// symlink on the way held to the protected_symlinks rule. The file is
// opened by its resolved name without following a link (O_NOFOLLOW), so
// that a link planted after the check is refused rather than followed,
// and an existing file in a sticky directory every user can write is
// appended to only when the caller or the directory's owner owns it (the
// kernel's fs.protected_regular rule): another user's file there may be a
// hard link to one of the caller's. Every refusal is a usage error naming
// the flag and the path.
func OpenAppend(flag, path string) (*os.File, error) {
	bad := func(format string, args ...any) error {
		return options.BadFlag(flag, path, format, args...)
	}
	final, err := Target(path)
	var notRegular *NotRegularError
	switch {
	case errors.As(err, &notRegular):
		return nil, bad("%v; tickscope writes only regular files", err)
	case err != nil:
		return nil, bad("%v", err)
	}
	f, err := openAppend(final)
	if err != nil {
		return nil, bad("cannot be opened for appending: %v", UnwrapPath(err))
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{"it is " + options.FileKind(fi.Mode())}
	}
	if err == nil {
		err = trustFile(final, fi)
	}
	if err != nil {
		f.Close()
		return nil, bad("%v", err)
	}
	return f, nil
}

// UnwrapPath drops the path from an *fs.PathError: the message names the
// path already, and a 300-character name printed twice helps nobody.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Path is the file that Commit replaces.
func (o *File) Path() string { return o.path }

// Commit writes the file with write and renames it into place. Without a
// path it does nothing. The path is checked again just before the rename:
// if it was replaced by something other than a regular file meanwhile, or
// its directory by another (a symlink put in its place by whoever owns
// the directory above), it is left alone and Commit fails.
func (o *File) Commit(write func(w io.Writer) error) error {
	if o.tmp == nil {
		return nil
	}
	tmp, unnamed := o.tmp, o.unnamed
	o.tmp = nil
	defer o.dir.close()
	fail := func(err error) error {
		tmp.Close()
		if !unnamed {
			o.dir.remove(tmp.Name())
		}
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	if err := write(tmp); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := o.dir.check(); err != nil {
		return fail(err)
	}
	testHook("checked")
	if mode, err := o.dir.mode(o.path); err == nil && !mode.IsRegular() {
		return fail(fmt.Errorf("it became %s during the run; left it alone", options.FileKind(mode)))
	}
	keep := o.dir.owner(o.path)
	if err := keep(tmp); err != nil {
		return fail(err)
	}
	name := tmp.Name()
	if unnamed {
		// The unnamed file keeps its descriptor, and so its lock, until
		// it is in place.
		defer tmp.Close()
		var err error
		if name, err = nameTemp(tmp, o.dir, o.flag, keep); err != nil {
			return fail(err)
		}
	} else if err := tmp.Close(); err != nil {
		return fail(err)
	}
	if err := o.dir.rename(name, o.path); err != nil {
		o.dir.remove(name)
		return fmt.Errorf("writing %s: %w", o.path, err)
	}
	return nil
}

// nameTemp gives the unnamed, written file f a temporary name in dir, for
// the rename into place: a hard link to it (linkTemp), or, where the OS
// will not link it, a named copy, given the owner and mode by keep.
func nameTemp(f *os.File, dir heldDir, flag string, keep func(*os.File) error) (string, error) {
	if name, err := linkTemp(f, dir, flag); err == nil {
		return name, nil
	}
	named, err := dir.createNamed(flag)
	if err != nil {
		return "", err
	}
	lockTemp(named)
	_, err = f.Seek(0, io.SeekStart)
	if err == nil {
		_, err = io.Copy(named, f)
	}
	if err == nil {
		err = keep(named)
	}
	if err == nil {
		err = named.Sync()
	}
	if closeErr := named.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		dir.remove(named.Name())
		return "", err
	}
	return named.Name(), nil
}

// Close removes the temporary file if nothing was committed.
func (o *File) Close() {
	if o.tmp != nil {
		o.tmp.Close()
		if !o.unnamed {
			o.dir.remove(o.tmp.Name())
		}
		o.tmp = nil
		o.dir.close()
	}
}
