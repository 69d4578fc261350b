// Command while-idle measures what a holder with --while costs while it
// waits (Linux, as root): it starts, side by side,
//
//   - apply --while with a program that does not run (the holder waits,
//     scanning /proc every second),
//   - apply --while with a program it starts itself (the holder holds and
//     goes on scanning),
//   - apply without --while (today's holder: it holds and checks every 5 s),
//
// each holding /dev/cpu_dma_latency at 2000000000 µs, the kernel's "no
// constraint", so that the machine is left as it is. After -settle it
// reads each holder's CPU time from /proc, and again -for later: utime +
// stime of /proc/PID/stat (10 ms ticks) and the sum of its threads'
// /proc/PID/task/TID/schedstat run time (ns). It then reads VmRSS and
// VmHWM from /proc/PID/status, ends the holders with SIGINT, and prints
// BENCHMARKS.md's rows. CPU time is the process's own, not the wall
// clock's: the machine may be loaded.
//
// A scan lists /proc only when a process or thread was created since the
// scan before (/proc/loadavg's last process id): -churn starts a process
// every 200 ms for the whole run, so that every scan lists /proc, as on a
// busy machine.
//
//	go build -o /tmp/tickscope ./cmd/tickscope
//	go run ./tools/while-idle -exe /tmp/tickscope [-for 10m] [-churn]
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tickscope/tickscope/tools/internal/cpushare"
)

// noConstraint is the /dev/cpu_dma_latency value that constrains nothing.
const noConstraint = "2000000000"

func main() {
	exe := flag.String("exe", "tickscope", "the tickscope binary")
	span := flag.Duration("for", 10*time.Minute, "how long to measure, after -settle")
	settle := flag.Duration("settle", 10*time.Second, "how long the holders run before measuring (start-up is not idle)")
	churn := flag.Bool("churn", false, "start a process every 200 ms, so that every scan lists /proc")
	flag.Parse()
	if *churn {
		go func() {
			for range time.Tick(200 * time.Millisecond) {
				exec.Command("true").Run()
			}
		}()
	}
	if err := run(*exe, *span, *settle); err != nil {
		fmt.Fprintln(os.Stderr, "while-idle:", err)
		os.Exit(1)
	}
}

type holder struct {
	name string
	cmd  *exec.Cmd
	// cpu is the CPU time read after settling.
	cpu cpushare.Time
}

func run(exe string, span, settle time.Duration) error {
	if os.Geteuid() != 0 {
		return errors.New("run as root: the holders open /dev/cpu_dma_latency")
	}
	dir, err := os.MkdirTemp("", "while-idle-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// The program the holding holder watches: sleep(1) under a name no
	// other process has.
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return err
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		return err
	}
	program := filepath.Join(dir, fmt.Sprintf("while-idle-%d", os.Getpid()))
	if err := os.WriteFile(program, data, 0o700); err != nil {
		return err
	}
	game := exec.Command(program, strconv.Itoa(int((settle + span + time.Minute).Seconds())))
	if err := game.Start(); err != nil {
		return err
	}
	defer func() { game.Process.Kill(); game.Wait() }()

	holders := []*holder{
		{name: "apply --while, waiting (its program does not run)", cmd: exec.Command(exe, "apply", "--dma-latency", noConstraint, "--no-esc", "--while", "while-idle-absent")},
		{name: "apply --while, holding (its program runs)", cmd: exec.Command(exe, "apply", "--dma-latency", noConstraint, "--no-esc", "--while", program)},
		{name: "apply without --while (holding)", cmd: exec.Command(exe, "apply", "--dma-latency", noConstraint, "--no-esc")},
	}
	for _, h := range holders {
		h.cmd.Stdout, h.cmd.Stderr = nil, os.Stderr
		if err := h.cmd.Start(); err != nil {
			return err
		}
		defer func() { h.cmd.Process.Kill(); h.cmd.Wait() }()
	}
	processesBefore := countProcesses()
	time.Sleep(settle)
	for _, h := range holders {
		if h.cpu, err = cpushare.Read(h.cmd.Process.Pid); err != nil {
			return err
		}
	}
	load := loadAverage()
	time.Sleep(span)
	fmt.Printf("over %v after %v to settle; processes on the machine %d then %d; load average %s then %s\n\n",
		span, settle, processesBefore, countProcesses(), load, loadAverage())
	fmt.Println("| holder | CPU time (utime+stime) | CPU time (threads' schedstat) | % of one core | VmRSS | VmHWM | threads |")
	fmt.Println("| --- | --- | --- | --- | --- | --- | --- |")
	for _, h := range holders {
		now, err := cpushare.Read(h.cmd.Process.Pid)
		if err != nil {
			return err
		}
		used := now.Sub(h.cpu)
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.cmd.Process.Pid))
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %d ms | %.1f ms | %.4f %% | %s | %s | %s |\n", h.name, used.Ticks*1000/cpushare.ClockTicks, float64(used.Ns)/1e6,
			used.Share(span), field(status, "VmRSS"), field(status, "VmHWM"), field(status, "Threads"))
	}
	for _, h := range holders {
		h.cmd.Process.Signal(syscall.SIGINT)
		h.cmd.Wait()
	}
	return nil
}

// countProcesses counts the processes in /proc.
func countProcesses() int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err == nil {
			n++
		}
	}
	return n
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(data))[:3], " ")
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
