package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// signalPrefix sends sig to the Wine processes of prefix whose executable
// is accepted by which, and waits (up to a minute) for them to exit. A Wine
// process is one whose executable is in Wine's directory (the loader, the
// preloader, the server) and whose environment names the prefix: the
// processes of Wine's session stay alive when their server is gone, and
// wineserver -k does not know them then.
func (w *wineSetup) signalPrefix(prefix string, sig syscall.Signal, which func(exe string) bool) {
	wineDir := filepath.Dir(w.wine) + string(filepath.Separator)
	want := []byte("WINEPREFIX=" + prefix + "\x00")
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, wineDir) || !which(exe) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), append([]byte{0}, want...)) {
			continue
		}
		if syscall.Kill(pid, sig) == nil {
			pids = append(pids, pid)
		}
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		alive := 0
		for _, pid := range pids {
			if syscall.Kill(pid, 0) == nil {
				if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil && !bytes.Contains(stat, []byte(") Z ")) {
					alive++
				}
			}
		}
		if alive == 0 {
			return
		}
	}
}
