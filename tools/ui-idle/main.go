// Command ui-idle measures what `tickscope ui` costs left alone (Linux):
// it starts `tickscope ui --no-browser` (and -simulate's scenario), opens
// its address in a headless Chromium when -page is set, reads the ui
// process's CPU time (utime + stime from /proc/PID/stat) 5 s after start
// and again -for later, reads VmRSS, VmHWM and Threads from
// /proc/PID/status, and ends ui with Ctrl+C (SIGINT). It prints one row of
// BENCHMARKS.md's table.
//
//	go build -o /tmp/tickscope ./cmd/tickscope
//	go run ./tools/ui-idle -exe /tmp/tickscope [-page] [-for 120s] [-simulate narrow-band]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/chromedp/chromedp"
)

// clockTicks is CLK_TCK, the unit of /proc/PID/stat's utime and stime, on
// every Linux this runs on (sysconf(_SC_CLK_TCK)).
const clockTicks = 100

func main() {
	exe := flag.String("exe", "tickscope", "the tickscope binary")
	page := flag.Bool("page", false, "open the page in a headless Chromium")
	span := flag.Duration("for", 120*time.Second, "how long to measure, after 5 s to start")
	simulate := flag.String("simulate", "", "run ui on the model's scenario")
	flag.Parse()
	if err := run(*exe, *page, *span, *simulate); err != nil {
		fmt.Fprintln(os.Stderr, "ui-idle:", err)
		os.Exit(1)
	}
}

func run(exe string, page bool, span time.Duration, simulate string) error {
	args := []string{"ui", "--no-browser"}
	if simulate != "" {
		args = append(args, "--simulate", simulate)
	}
	cmd := exec.Command(exe, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	url := ""
	lines := bufio.NewScanner(stdout)
	for url == "" && lines.Scan() {
		if _, after, ok := strings.Cut(lines.Text(), "tickscope ui: "); ok {
			url = strings.TrimSpace(after)
		}
	}
	if url == "" {
		return fmt.Errorf("%s printed no address", exe)
	}
	go func() {
		for lines.Scan() {
		}
	}()
	if page {
		browser, err := exec.LookPath("chromium")
		if err != nil {
			return err
		}
		dir, err := os.MkdirTemp("", "ui-idle-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		alloc, cancel := chromedp.NewExecAllocator(context.Background(), chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(filepath.Join(dir, "profile")))
		defer cancel()
		ctx, cancel := chromedp.NewContext(alloc)
		defer cancel()
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			return fmt.Errorf("opening the page: %w", err)
		}
	}
	time.Sleep(5 * time.Second)
	before, err := cpuTicks(cmd.Process.Pid)
	if err != nil {
		return err
	}
	time.Sleep(span)
	after, err := cpuTicks(cmd.Process.Pid)
	if err != nil {
		return err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return err
	}
	cpu := float64(after-before) / clockTicks
	fmt.Printf("| page open %v | %s | CPU in %v %.2f s | %.2f %% of one CPU | VmRSS %s (VmHWM %s) | threads %s |\n",
		page, strings.TrimSpace(simulate), span, cpu, 100*cpu/span.Seconds(), field(status, "VmRSS"), field(status, "VmHWM"), field(status, "Threads"))
	cmd.Process.Signal(syscall.SIGINT)
	return cmd.Wait()
}

// cpuTicks is a process's utime + stime, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command name (in parentheses, which may hold
	// spaces): utime and stime are the 14th and 15th of the line.
	rest := string(data[strings.LastIndexByte(string(data), ')')+2:])
	f := strings.Fields(rest)
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, data)
	}
	return utime + stime, nil
}

// field is one line's value of /proc/PID/status.
func field(status []byte, name string) string {
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}
