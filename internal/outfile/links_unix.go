//go:build unix

package outfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// maxLinks is how many symlinks one path may pass through, as the
// kernel's own limit (MAXSYMLINKS on Linux).
const maxLinks = 40

// followLinks resolves every symlink in path, as the kernel does when it
// opens it, and applies the kernel's fs.protected_symlinks rule to each:
// a symlink in a sticky world-writable directory (/tmp) is followed only
// when its owner is the caller or the directory's owner. tickscope
// resolves links itself and renames over their target, which no kernel
// rule sees, so it applies the rule itself, whatever the sysctl says.
func followLinks(path string) (string, error) {
	resolved := "" // the part of path resolved so far, free of symlinks
	if filepath.IsAbs(path) {
		resolved = "/"
	}
	pending := strings.Split(path, "/")
	links := 0
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			resolved = parent(resolved)
			continue
		}
		next := filepath.Join(resolved, name)
		if resolved == "" {
			next = name
		}
		fi, err := os.Lstat(next)
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			if !fi.IsDir() && hasName(pending) {
				return "", &fs.PathError{Op: "lstat", Path: next, Err: syscall.ENOTDIR}
			}
			resolved = next
			continue
		}
		if links++; links > maxLinks {
			return "", &fs.PathError{Op: "readlink", Path: path, Err: syscall.ELOOP}
		}
		if err := trustLink(next, fi); err != nil {
			return "", err
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			resolved = "/"
		}
		pending = append(strings.Split(target, "/"), pending...)
	}
	if resolved == "" {
		resolved = "."
	}
	return resolved, nil
}

// parent is the directory above resolved, a path free of symlinks ("" is
// the working directory).
func parent(resolved string) string {
	switch {
	case resolved == "/":
		return "/"
	case resolved == "" || resolved == ".." || strings.HasSuffix(resolved, "/.."):
		return filepath.Join(resolved, "..")
	}
	if dir := filepath.Dir(resolved); dir != "." {
		return dir
	}
	return ""
}

// hasName reports whether components hold a name still to resolve.
func hasName(components []string) bool {
	for _, c := range components {
		if c != "" && c != "." {
			return true
		}
	}
	return false
}

// trustLink applies the fs.protected_symlinks rule to the symlink link:
// in a sticky directory that every user can write, another user may have
// planted it pointing at any file of the caller's, so only a link owned by
// the caller or by the directory's owner is followed.
func trustLink(link string, fi fs.FileInfo) error {
	dir := filepath.Dir(link)
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	linkOwner, ok := ownerOf(fi)
	if !ok {
		return errors.New("cannot tell who owns the symlink " + link)
	}
	if ok, err := trusted(di, linkOwner); err != nil || ok {
		return err
	}
	return &UntrustedLinkError{Link: link, Dir: dir, Owner: userName(linkOwner)}
}

// trusted is the one rule of the kernel's fs.protected_symlinks and
// fs.protected_regular, which tickscope applies itself to every symlink
// it follows and every existing file it appends to or takes the owner of:
// a symlink or file owned by owner in the directory di is trusted unless
// di is sticky and every user can write it (/tmp), and owner is neither
// the caller nor the directory's owner. Anyone could have planted such a
// one there.
func trusted(di fs.FileInfo, owner uint32) (bool, error) {
	if di.Mode()&fs.ModeSticky == 0 || di.Mode().Perm()&0o002 == 0 {
		return true, nil
	}
	dirOwner, ok := ownerOf(di)
	if !ok {
		return false, errors.New("cannot tell who owns the directory " + di.Name())
	}
	return owner == uint32(os.Geteuid()) || owner == dirOwner, nil
}

// openAppend opens path for appending: its directory opened as Open
// opens an output's (openDir, no link followed), and the file relative to
// it without following a symlink in its name (O_NOFOLLOW fails with ELOOP
// on one). O_NONBLOCK keeps a FIFO put there since the check from
// blocking the open; the caller refuses it.
func openAppend(path string) (*os.File, error) {
	dir, err := openDir(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	defer dir.close()
	fd, err := unix.Openat(dir.fd(), filepath.Base(path), unix.O_RDWR|unix.O_APPEND|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0o644)
	if errors.Is(err, unix.ELOOP) {
		return nil, &fs.PathError{Op: "open", Path: path, Err: errors.New("it became a symlink since it was checked; not followed")}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	// Writes block as usual once the file is known to be a regular file
	// (the flag means nothing for one; cleared for clarity).
	if err := syscall.SetNonblock(int(f.Fd()), false); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// trustFile applies the fs.protected_regular rule to the regular file
// path, opened for appending: in a sticky directory every user can write,
// a file owned by neither the caller nor the directory's owner is refused.
func trustFile(path string, fi fs.FileInfo) error {
	dir := filepath.Dir(path)
	di, err := os.Stat(dir)
	if err != nil {
		return err
	}
	fileOwner, ok := ownerOf(fi)
	if !ok {
		return errors.New("cannot tell who owns " + path)
	}
	if ok, err := trusted(di, fileOwner); err != nil || ok {
		return err
	}
	return fmt.Errorf("%s is owned by %s in %s, a sticky directory every user can write, and neither you nor the directory's owner made it; another user's file there may be a hard link to one of yours, so it is not appended to (the kernel's fs.protected_regular rule)",
		path, userName(fileOwner), dir)
}

func ownerOf(fi fs.FileInfo) (uint32, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return st.Uid, true
}

// userName names a user id for a message: "nobody (uid 65534)".
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username + " (uid " + id + ")"
	}
	return "uid " + id
}
