package platform

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
)

func TestParseStat(t *testing.T) {
	for _, tt := range []struct {
		stat   string
		name   string
		kernel bool
		err    bool
	}{
		{"2 (kthreadd) S 0 0 0 0 -1 2129984 0 0", "kthreadd", true, false},
		{"1 (systemd) S 0 1 1 0 -1 4194560 0 0", "systemd", false, false},
		// comm may hold spaces and parentheses: fields count from the last ")".
		{"77 (a) b (c)) R 1 77 77 0 -1 4194304 0", "a) b (c)", false, false},
		{"78 (evil) S 1 2 3 4 5 2097152)) S 1 1 1 0 -1 4194304", "evil) S 1 2 3 4 5 2097152)", false, false},
		{"3 (x) S 1 2", "", false, true},
		{"3 x S 1 2 3 4 5 6", "", false, true},
		{"3 (x) S 1 2 3 4 5 flags", "", false, true},
	} {
		p, err := parseStat(3, tt.stat)
		if (err != nil) != tt.err || err == nil && (p.Name != tt.name || p.KernelThread != tt.kernel) {
			t.Errorf("parseStat(%q) = %+v, %v", tt.stat, p, err)
		}
	}
}

func TestDescribeProcess(t *testing.T) {
	self, err := system{}.DescribeProcess(os.Getpid())
	if err != nil || self.KernelThread || self.Name == "" {
		t.Errorf("this process: %+v, %v", self, err)
	}
	_, err = system{}.DescribeProcess(1 << 30)
	var osErr *seam.OSError
	if !errors.As(err, &osErr) || !errors.Is(err, seam.ErrNoProcess) || !strings.HasPrefix(err.Error(), "read /proc/1073741824/stat: ") {
		t.Errorf("no such process: %v", err)
	}
	// kthreadd is pid 2 wherever the kernel's threads are visible (not in
	// a PID namespace of a container).
	if comm, _ := os.ReadFile("/proc/2/comm"); strings.TrimSpace(string(comm)) != "kthreadd" {
		t.Skip("pid 2 is not kthreadd here (a PID namespace)")
	}
	if p, err := (system{}).DescribeProcess(2); err != nil || !p.KernelThread {
		t.Errorf("kthreadd: %+v, %v", p, err)
	}
}

// TestStartTiedDiesWithItsThread: the program gets SIGKILL when the thread
// that started it ends. The thread is ended the way the Go runtime ends
// one: a goroutine locked to it returns without unlocking (the main thread
// is the exception: the runtime parks it instead, so the program is
// started from another).
func TestStartTiedDiesWithItsThread(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	started := make(chan error, 1)
	var start func()
	start = func() {
		runtime.LockOSThread()
		if syscall.Gettid() == os.Getpid() {
			done := make(chan struct{})
			go func() { start(); close(done) }()
			<-done
			runtime.UnlockOSThread()
			return
		}
		// Never unlocked: the thread ends with this goroutine.
		_, err := system{}.StartTied(cmd)
		started <- err
	}
	go start()
	if err := <-started; err != nil {
		t.Skipf("no sleep to run: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var exitErr *exec.ExitError
		if !errors.As(err, &exitErr) || exitErr.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("sleep ended with %v, want SIGKILL", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("sleep still runs 10 s after the thread that started it ended")
	}
}
