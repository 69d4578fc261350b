package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// wineProcess is a Wine process of a prefix, as /proc shows it.
type wineProcess struct {
	pid   int
	exe   string
	start uint64 // since boot, in clock ticks (/proc/PID/stat field 22)
}

// prefixProcesses lists the Wine processes of prefix: those whose
// executable is in wineDir (the loader, the preloader, the server) and
// whose environment names the prefix. The processes of Wine's session stay
// alive when their server is gone, and wineserver -k does not know them
// then, so they are found here rather than asked of the server.
func prefixProcesses(wineDir, prefix string) []wineProcess {
	wineDir += string(filepath.Separator)
	want := []byte("\x00WINEPREFIX=" + prefix + "\x00")
	var procs []wineProcess
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err != nil || !strings.HasPrefix(exe, wineDir) {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append([]byte{0}, env...), want) {
			continue
		}
		procs = append(procs, wineProcess{pid: pid, exe: exe, start: procStart(pid)})
	}
	return procs
}

// procStart is the process's start time since boot, in clock ticks, or 0
// when it cannot be read (the process is gone).
func procStart(pid int) uint64 {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command name, which may hold spaces, start
	// after its closing parenthesis: state is field 3, starttime 22.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 20 {
		return 0
	}
	n, _ := strconv.ParseUint(fields[19], 10, 64)
	return n
}

// signalPrefix sends sig to the Wine processes of prefix whose executable
// is accepted by which, and waits (up to a minute) for them to exit.
func (w *wineSetup) signalPrefix(prefix string, sig syscall.Signal, which func(exe string) bool) {
	signalProcesses(prefixProcesses(filepath.Dir(w.wine), prefix), sig, which)
}

func signalProcesses(procs []wineProcess, sig syscall.Signal, which func(exe string) bool) {
	var pids []int
	for _, p := range procs {
		if which(p.exe) && syscall.Kill(p.pid, sig) == nil {
			pids = append(pids, p.pid)
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

// describeProcess says what a process is doing, for a report of what a
// command left running: its command line, and each thread's state and
// the kernel function it waits in (wchan); with backtrace and gdb on the
// machine, every thread's native backtrace too.
func describeProcess(pid int, backtrace bool) string {
	var b strings.Builder
	cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	fmt.Fprintf(&b, "  pid %d: %s\n", pid, strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		dir := fmt.Sprintf("/proc/%d/task/%s/", pid, task.Name())
		stat, _ := os.ReadFile(dir + "stat")
		state := "?"
		if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			state = string(stat[i+2])
		}
		comm, _ := os.ReadFile(dir + "comm")
		wchan, _ := os.ReadFile(dir + "wchan")
		syscallLine, _ := os.ReadFile(dir + "syscall")
		fmt.Fprintf(&b, "    thread %s (%s): state %s, wchan %s, syscall %s\n", task.Name(), strings.TrimSpace(string(comm)), state, wchan, strings.TrimSpace(string(syscallLine)))
	}
	if gdb, err := exec.LookPath("gdb"); err == nil && backtrace {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, gdb, "-batch", "-nx", "-p", strconv.Itoa(pid), "-ex", "thread apply all bt 20")
		cmd.WaitDelay = 5 * time.Second
		out, err := cmd.CombinedOutput()
		fmt.Fprintf(&b, "    gdb (%v):\n", err)
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			if strings.HasPrefix(line, "#") || strings.HasPrefix(line, "Thread ") {
				fmt.Fprintf(&b, "      %s\n", line)
			}
		}
	}
	return b.String()
}

// passOutput returns what PROGRAM writes to instead of dst: dst itself
// unless it is a pipe (a script's capture; a file or /dev/null is passed
// on as it is), else a pipe of this process's own whose reading end is
// copied to dst until done is closed, at the end of its output.
func passOutput(dst *os.File) (child *os.File, done <-chan struct{}, err error) {
	fi, err := dst.Stat()
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		return dst, nil, nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		io.Copy(dst, r)
		r.Close()
	}()
	return w, copied, nil
}

// wineOverranName is the file, in a script's $WORK, that says a Wine
// command of the script ran past its deadline: the script's later Wine
// commands do not run, and the script fails (scriptEnv's Defer).
const wineOverranName = ".wine-overran"

// wineBounded is the scripts' bounded Wine command (tickscope-wine PROGRAM
// ARGS...: the `tickscope` and `wine64` of the scripts' PATH run it with
// Wine's loader as PROGRAM). It runs PROGRAM in $WINEPREFIX with standard
// input passed on and its output copied, passes on SIGINT, SIGTERM and
// SIGHUP, and exits as PROGRAM did. Two bounds make a hang cost at most
// TICKSCOPE_WINE_DEADLINE seconds, never a script's or go test's timeout:
//   - past the deadline, it reports PROGRAM and every Wine process of the
//     prefix (what each thread waits on), kills them all, records the
//     overrun in $WORK for the script to fail on, and exits 124;
//   - once PROGRAM has exited, a Wine process it started that still holds
//     its output is reported and killed too (and recorded): the output is
//     copied through pipes of this process's own, so that the script never
//     waits on a pipe another process holds.
func wineBounded(args []string) int {
	if len(args) < 1 {
		fmt.Fprintln(os.Stderr, "usage: tickscope-wine PROGRAM [ARGS...]")
		return 2
	}
	work, prefix := os.Getenv("WORK"), os.Getenv("WINEPREFIX")
	marker := filepath.Join(work, wineOverranName)
	if data, err := os.ReadFile(marker); err == nil {
		fmt.Fprintf(os.Stderr, "tickscope tests: not run, an earlier Wine command of this script overran:\n%s", data)
		return 125
	}
	deadline := wineCommandDeadline
	if s := os.Getenv("TICKSCOPE_WINE_DEADLINE"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "tickscope-wine: TICKSCOPE_WINE_DEADLINE=%q: want whole seconds, at least 1\n", s)
			return 2
		}
		deadline = time.Duration(n) * time.Second
	}
	wineDir := filepath.Dir(args[0])
	began := procStart(os.Getpid())
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = os.Stdin
	stdout, stdoutDone, err := passOutput(os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tickscope-wine: %v\n", err)
		return 127
	}
	stderr, stderrDone, err := passOutput(os.Stderr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "tickscope-wine: %v\n", err)
		return 127
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The signals to pass on are caught before PROGRAM starts, so that
	// none ends this process and leaves PROGRAM running.
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	err = cmd.Start()
	for _, f := range []*os.File{stdout, stderr} {
		if f != os.Stdout && f != os.Stderr {
			f.Close() // PROGRAM has its own copy
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tickscope-wine: %v\n", err)
		return 127
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	timer := time.NewTimer(deadline)
	defer timer.Stop()
	command := strings.Join(append([]string{filepath.Base(args[0])}, args[1:]...), " ")
	overran := func(what string) int {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s; the Wine processes of %s:\n", command, what, prefix)
		// Backtraces of what the command started (the session's
		// processes are older), so that the report takes seconds.
		procs := prefixProcesses(wineDir, prefix)
		for _, p := range procs {
			b.WriteString(describeProcess(p.pid, p.start >= began))
		}
		if len(procs) == 0 {
			b.WriteString("  none\n")
		}
		signalProcesses(procs, syscall.SIGKILL, func(string) bool { return true })
		cmd.Process.Kill()
		fmt.Fprintf(os.Stderr, "tickscope tests: %s", b.String())
		if err := os.WriteFile(marker, []byte(b.String()), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "tickscope tests: recording the overrun: %v\n", err)
		}
		return 124
	}
	for {
		select {
		case sig := <-signals:
			cmd.Process.Signal(sig)
		case <-timer.C:
			code := overran(fmt.Sprintf("still ran after %v: killed with every Wine process of its prefix", deadline))
			select {
			case <-waited:
			case <-time.After(10 * time.Second):
			}
			return code
		case err := <-waited:
			// PROGRAM has exited: its output ends within a few seconds
			// unless a process it started holds it.
			const outputDelay = 5 * time.Second
			held := time.After(outputDelay)
			for _, done := range []<-chan struct{}{stdoutDone, stderrDone} {
				if done == nil {
					continue
				}
				select {
				case <-done:
				case <-held:
					return overran(fmt.Sprintf("exited, but a process it started still held its output %v later: killed with every Wine process of its prefix", outputDelay))
				}
			}
			if cmd.ProcessState == nil {
				fmt.Fprintf(os.Stderr, "tickscope-wine: %v\n", err)
				return 127
			}
			if status, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && status.Signaled() {
				// Die as PROGRAM died, as a shell's exec would.
				signal.Reset(status.Signal())
				syscall.Kill(os.Getpid(), status.Signal())
				return 128 + int(status.Signal())
			}
			return cmd.ProcessState.ExitCode()
		}
	}
}
