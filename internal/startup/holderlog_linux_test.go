package startup_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerstate"
)

// windowless is this machine's System as the windowless holder sees it: no
// console, so that its output goes to its log. (No Linux holder runs
// without one; the log's file handling is the same code on every OS.)
type windowless struct{ seam.System }

func (windowless) Console() seam.Console { return seam.ConsoleNone }

// TestHolderLogIgnoresPlantedLinks: root's startup holder writing its log
// must empty no file another user chose. nobody plants a link to a file of
// root's at the log's old place, the temporary directory (here a sticky,
// world-writable TMPDIR, as /tmp is): the holder writes its log in its own
// state directory instead, and the file is untouched. nobody cannot plant
// anything in the state directory; a link, a second name or another
// user's file there anyway is refused, not emptied, not read by status
// (timerstate.LastLogLine).
func TestHolderLogIgnoresPlantedLinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to plant links as a second user (setpriv --reuid=65534)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to act as a second user")
	}
	// Not under t.TempDir: its parent is 0700, which nobody cannot cross.
	base, err := os.MkdirTemp("", "tickscope-holderlog-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	tmp, run, precious := filepath.Join(base, "tmp"), filepath.Join(base, "run"), filepath.Join(base, "precious")
	for _, step := range []error{
		os.Chmod(base, 0o755),
		os.Mkdir(tmp, 0o755),
		os.Chmod(tmp, 0o777|os.ModeSticky),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	const keep = "root's file: keep me\n"
	if err := os.WriteFile(precious, []byte(keep), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", tmp)
	t.Setenv(platform.RuntimeDirEnv, run)
	asNobody := func(args ...string) error {
		return exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups"}, args...)...).Run()
	}
	if err := asNobody("ln", "-s", precious, filepath.Join(tmp, "tickscope-holder.log")); err != nil {
		t.Fatalf("planting a link as nobody: %v", err)
	}
	sys := windowless{platform.NewSystem()}
	holderArgs := []string{"apply", "--dma-latency", "0", "--as-startup"}
	startHolder := func() (moved bool) {
		var stdout, stderr io.Writer = os.Stdout, os.Stderr
		closeLog := startup.LogHolderOutput(sys, holderArgs, &stdout, &stderr)
		defer closeLog()
		if stdout == os.Stdout {
			return false
		}
		io.WriteString(stdout, "holding\n")
		return true
	}
	untouched := func(when string) {
		t.Helper()
		if data, err := os.ReadFile(precious); err != nil || string(data) != keep {
			t.Fatalf("%s: root's file reads %q, %v; want %q", when, data, err, keep)
		}
	}

	if !startHolder() {
		t.Error("the holder's output was not moved to its log")
	}
	untouched("the link at the old place")
	log := filepath.Join(run, "holder.log")
	if data, err := os.ReadFile(log); err != nil || !strings.HasSuffix(string(data), "holding\n") {
		t.Errorf("the log %s reads %q, %v", log, data, err)
	}
	if got := timerstate.LastLogLine(sys); got != "holding" {
		t.Errorf("status shows the log's last line as %q, want \"holding\"", got)
	}
	if fi, err := os.Stat(run); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the state directory: %v, %v; want mode 0700", fi, err)
	}
	if asNobody("ln", "-s", precious, filepath.Join(run, "planted.log")) == nil {
		t.Error("nobody planted a link in the state directory")
	}

	// What nobody could not plant is refused anyway: the log is not
	// written, the file it names not emptied, nor shown by status.
	for _, plant := range []struct {
		name  string
		plant func() error
	}{
		{"a symbolic link", func() error { return os.Symlink(precious, log) }},
		{"a second name of root's file", func() error { return os.Link(precious, log) }},
		{"a file of nobody's", func() error {
			if err := os.WriteFile(log, []byte(keep), 0o644); err != nil {
				return err
			}
			return os.Chown(log, 65534, 65534)
		}},
	} {
		os.Remove(log)
		if err := plant.plant(); err != nil {
			t.Fatal(err)
		}
		if startHolder() {
			t.Errorf("%s at the log's place: the holder's output went to it", plant.name)
		}
		untouched(plant.name)
		if data, err := os.ReadFile(log); err != nil || string(data) != keep {
			t.Errorf("%s at the log's place: it reads %q, %v", plant.name, data, err)
		}
		if got := timerstate.LastLogLine(sys); got != "" {
			t.Errorf("%s at the log's place: status shows %q", plant.name, got)
		}
	}
}
