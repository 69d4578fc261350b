package ui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/platform"
)

// On this machine's System, a launcher name that is a symbolic link or
// another user's file is left as it is, and nothing is read, locked or
// removed through it; a dead run's page of the user's is removed.
func TestLauncherLeavesWhatIsNotOurs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root")
	}
	state := filepath.Join(t.TempDir(), "run")
	t.Setenv(platform.RuntimeDirEnv, state)
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(target, []byte("keep me\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(state, launcherPrefix+"link"+launcherSuffix)
	theirs := filepath.Join(state, launcherPrefix+"theirs"+launcherSuffix)
	dead := filepath.Join(state, launcherPrefix+"dead"+launcherSuffix)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{theirs, dead} {
		if err := os.WriteFile(p, []byte("token\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	path, remove, err := launcher(platform.NewSystem(), "http://127.0.0.1:1/t/", &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	if filepath.Dir(path) != state {
		t.Errorf("the launcher is %s, want it in %s", path, state)
	}
	for _, p := range []string{link, theirs} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "keep me\n" {
		t.Errorf("the link's target: %q, %v", data, err)
	}
	if _, err := os.Lstat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead run's page %s is still there (%v)", dead, err)
	}
	if w := stderr.String(); !strings.Contains(w, "uid 65534") || strings.Count(w, theirs) != 1 {
		t.Errorf("the warnings do not say why another user's page was left:\n%s", w)
	}
}
