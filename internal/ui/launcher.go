package ui

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tickscope/tickscope/internal/seam"
)

// The browser is given a launcher page's path, which sends it on to the
// address, as Jupyter does: the address, token and all, is then on no
// command line (the opener's and the browser's are readable by every local
// user in /proc). The page lives in the user's state directory
// (seam.StateFiles.StateDir: root's /run/tickscope, a user's
// $XDG_RUNTIME_DIR/tickscope, %LOCALAPPDATA%\tickscope on Windows), opened
// through OpenStateFile, which refuses a link or another user's file: never
// in the temporary directory, which every user can write and list. Each
// run's page has a name of its own (launcherPrefix, random, ".html") and is
// locked for the run's life (lockLauncher); the lock dies with the run
// however it ends, so a page whose lock can be taken is a dead run's (a
// SIGKILL leaves it, token and all) and the next run removes it.

const (
	launcherPrefix = "ui-launcher-"
	launcherSuffix = ".html"
)

// launcher removes what dead runs left (removeDeadLaunchers), then writes
// this run's page, 0600, locked. remove deletes and unlocks it: the page's
// first event stream does, and quitting does.
func launcher(sys seam.StateFiles, url string, stderr io.Writer) (path string, remove func(), err error) {
	if sys == nil {
		return "", nil, errors.New("no state directory to keep the page's launcher in")
	}
	if dir, err := sys.StateDir(); err == nil {
		removeDeadLaunchers(sys, dir, stderr)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return "", nil, err
	}
	name := launcherPrefix + hex.EncodeToString(id) + launcherSuffix
	f, err := sys.OpenStateFile(name, seam.StateReplace)
	if err != nil {
		return "", nil, fmt.Errorf("the page's launcher: %w", err)
	}
	path = f.Name()
	remove = sync.OnceFunc(func() {
		os.Remove(path)
		f.Close()
	})
	if err := lockLauncher(f); err != nil {
		remove()
		return "", nil, &seam.OSError{Call: "lock " + path, Err: err}
	}
	u := html.EscapeString(url)
	page := `<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + u + `"><title>tickscope</title><p><a href="` + u + `">Open tickscope ui</a></p>` + "\n"
	if _, err := f.WriteString(page); err != nil {
		remove()
		return "", nil, &seam.OSError{Call: "write " + path, Err: err}
	}
	return path, remove, nil
}

// removeDeadLaunchers removes the launcher pages in dir whose run has
// ended: each is opened through OpenStateFile (a plain file of the user's
// with one name, not a link: a link is passed over before that) and
// removed only when its lock can be taken, while holding it. An empty page is left: it may be a run's that has made
// it and not locked it yet, and holds no token. What cannot be removed is
// said, once, and is no reason not to run.
func removeDeadLaunchers(sys seam.StateFiles, dir string, stderr io.Writer) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, launcherPrefix) || !strings.HasSuffix(name, launcherSuffix) || !e.Type().IsRegular() {
			continue
		}
		f, err := sys.OpenStateFile(name, seam.StateRead)
		if err != nil {
			fmt.Fprintf(stderr, "tickscope: warning: leaving a launcher page as it is: %v\n", err)
			continue
		}
		if fi, err := f.Stat(); err == nil && fi.Size() > 0 && tryLockLauncher(f) {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				fmt.Fprintf(stderr, "tickscope: warning: a dead run's launcher page is left: %v\n", err)
			}
		}
		f.Close()
	}
}
