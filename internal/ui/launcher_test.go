package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/sim"
)

// A run's launcher page is in the user's state directory, 0600, and locked
// while the run lives: the next run removes a dead run's page (a SIGKILL
// leaves it, with its token), keeps a live run's, and touches nothing
// else there.
func TestLauncherRemovesWhatADeadRunLeft(t *testing.T) {
	state := t.TempDir()
	sys := &sim.System{State: state}
	dead := filepath.Join(state, "ui-launcher-dead.html")
	other := filepath.Join(state, "holder.log")
	for _, p := range []string{dead, other} {
		if err := os.WriteFile(p, []byte("http://127.0.0.1:1/deadtoken/\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stderr bytes.Buffer
	live, removeLive, err := launcher(sys, "http://127.0.0.1:2/livetoken/", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer removeLive()
	if filepath.Dir(live) != state || !strings.HasPrefix(filepath.Base(live), launcherPrefix) {
		t.Errorf("the launcher is %s, want one in the state directory %s", live, state)
	}
	if fi, err := os.Stat(live); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the launcher: %v, %v; want mode 0600", fi, err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead run's launcher %s is still there (%v)", dead, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that is not a launcher was removed: %v", err)
	}

	// A second run keeps the first's page, which is live.
	second, removeSecond, err := launcher(sys, "http://127.0.0.1:3/token3/", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if page, err := os.ReadFile(live); err != nil || !strings.Contains(string(page), "livetoken") {
		t.Errorf("a second run removed or changed a live run's launcher: %q, %v", page, err)
	}
	removeSecond()
	if _, err := os.Stat(second); !os.IsNotExist(err) {
		t.Errorf("remove left %s (%v)", second, err)
	}
	if stderr.Len() != 0 {
		t.Errorf("warnings: %s", stderr.String())
	}
}
