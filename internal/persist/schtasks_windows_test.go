package persist_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/tickscope/tickscope/internal/persist"
	"github.com/tickscope/tickscope/internal/platform"
)

// This runs only on Windows (the file's suffix), against the real Task
// Scheduler (CONTRIBUTING.md: tests that only real Windows can pass): the task TaskXML writes
// is registered with schtasks /Create /XML through the platform's own
// Startup, read back with schtasks /Query /XML, and deleted, from a
// directory whose path holds spaces, &, an apostrophe and non-ASCII
// letters. Task Scheduler accepts a logon task from a user who is not an
// administrator only when it names that user (MS-TSCH, "SchRpcRegisterTask":
// a logon trigger for any user needs administrative rights): run
// non-elevated, as the README's ordinary terminal is, this checks that.
// Wine's Task Scheduler is not Windows' (it has no /Query): under Wine this
// test fails by design.
func TestSchtasksRegistersQueriesAndDeletesTheTask(t *testing.T) {
	elevated := windows.GetCurrentProcessToken().IsElevated()
	t.Logf("elevated: %v (non-elevated is the case that matters: an administrator may register any logon task)", elevated)
	startup := platform.NewSystem().Startup()
	if startup == nil {
		t.Fatal("the Windows System has no Startup")
	}
	existing, err := startup.Read()
	if err != nil {
		t.Fatalf("reading the task %q before the test: %v", persist.TaskName, err)
	}
	if existing != nil {
		t.Skipf("a task named %q exists on this machine (a holder set up with apply --persist?); this test would replace it, so it leaves it alone", persist.TaskName)
	}

	// The holder's path, and the temporary directory Install writes the
	// definition to (os.CreateTemp follows TMP), both non-ASCII.
	dir := filepath.Join(t.TempDir(), "tick scope & O'Brien ñ Ω 测试")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMP", dir)
	t.Setenv("TEMP", dir)
	exe := filepath.Join(dir, "tickscope.exe")
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"apply", "--ms", "1", "--no-console", "--no-esc"}
	definition, err := persist.TaskXML(persist.Task{
		Exe:          exe,
		Args:         args,
		Description:  "holds the timer at logon " + persist.Marker("windows-native-test"),
		DelaySeconds: 15,
	})
	if err != nil {
		t.Fatal(err)
	}

	t.Cleanup(func() { startup.Delete() })
	if err := startup.Install(definition); err != nil {
		t.Fatalf("schtasks /Create /XML (elevated %v): %v", elevated, err)
	}

	// schtasks /Query /XML itself, so that Read's fallback (the task's
	// file) cannot hide a failing query; then Read, the product's path.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	query := exec.CommandContext(ctx, "schtasks", "/Query", "/TN", persist.TaskName, "/XML", "ONE")
	query.Stderr = &stderr
	queried, err := query.Output()
	if err != nil {
		t.Fatalf("schtasks /Query /TN %s /XML ONE: %v: %s", persist.TaskName, err, stderr.Bytes())
	}
	read, err := startup.Read()
	if err != nil {
		t.Fatalf("Startup.Read: %v", err)
	}
	for _, c := range []struct {
		name string
		data []byte
	}{{"schtasks /Query /XML", queried}, {"Startup.Read", read}} {
		in, err := persist.ParseTask(c.data)
		if err != nil {
			t.Errorf("%s: ParseTask: %v\n%s", c.name, err, c.data)
			continue
		}
		if in.Exe != exe {
			t.Errorf("%s: the command reads back as %q, want %q", c.name, in.Exe, exe)
		}
		if !slices.Equal(in.Args, args) {
			t.Errorf("%s: the arguments read back as %q, want %q", c.name, in.Args, args)
		}
		if !in.Ours() {
			t.Errorf("%s: the description %q lost tickscope's marker", c.name, in.Description)
		}
	}

	if err := startup.Delete(); err != nil {
		t.Fatalf("schtasks /Delete: %v", err)
	}
	after, err := startup.Read()
	if err != nil {
		t.Fatalf("reading the task after deleting it: %v", err)
	}
	if after != nil {
		t.Errorf("the task %q is still registered after schtasks /Delete", persist.TaskName)
	}
}
