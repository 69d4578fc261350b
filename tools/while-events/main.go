// Command while-events measures, side by side in one run, two holders
// with --while (Linux, as root, where the kernel offers its process
// events): one on the kernel's process events (the connector), as apply
// --while runs where it can, and one that scans /proc every second, as
// it runs where it cannot (the same hold, its System's ProgramEvents
// made unsupported). Each holds /dev/cpu_dma_latency at 2000000000 µs,
// the kernel's "no constraint", while its program runs.
//
// It reads each holder's CPU time (the sum of its threads'
// /proc/PID/task/TID/schedstat run time, and utime + stime in 10 ms
// ticks) over -for while nothing starts, then over -for while an
// unrelated process (true(1)) is started every -every (200 ms); then it starts
// and kills the watched program -starts times, at random moments, and
// takes how long after the start (just before fork) and the kill each
// holder's scan that saw it ran (the event's time, taken as the scan
// began, before the setting is taken and checked).
//
//	go run ./tools/while-events [-for 2m] [-starts 20] [-every 200ms]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/machine"
	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
	"github.com/tickscope/tickscope/tools/internal/cpushare"
)

func main() {
	role := flag.String("holder", "", "run as a holder: events or scan (the tool starts them)")
	program := flag.String("program", "", "the holder's program")
	span := flag.Duration("for", 2*time.Minute, "how long each CPU reading lasts")
	starts := flag.Int("starts", 20, "how many times the program is started and killed")
	every := flag.Duration("every", 200*time.Millisecond, "how often the churn starts a process")
	flag.Parse()
	var err error
	if *role != "" {
		err = holder(*role, *program)
	} else {
		err = run(*span, *starts, *every)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "while-events:", err)
		os.Exit(1)
	}
}

// noEvents is this machine's System with no process events: the hold
// scans every second, as where the kernel offers none.
type noEvents struct{ seam.System }

func (noEvents) ProgramEvents([]string) (seam.ProgramEvents, error) { return nil, seam.ErrUnsupported }

// holder runs a hold with --while program and prints its source, then
// each start and exit it sees: "started|exited PID UNIXNANO", the time
// of the scan that saw it.
func holder(role, program string) error {
	sys := platform.NewSystem()
	if role == "scan" {
		sys = noEvents{sys}
	}
	host := machine.Host()
	q, err := host.Query()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	noConstraint := int32(2000000000)
	_, err = hold.Hold(ctx, host, sys, q, timerinfo.Setting{CPUDMALatencyUs: &noConstraint}, hold.HoldOptions{
		NoEsc: true, While: []string{program},
		Waiting: func(rep *hold.HoldReport) {
			fmt.Printf("waiting %s|%s\n", rep.While.Source, rep.While.SourceError)
		},
		Changed: func(_ hold.WhileState, e *hold.ProgramEvent) {
			fmt.Printf("%s %d %d\n", e.Event, e.PID, e.Time.UnixNano())
		},
		Warn: func(msg string) { fmt.Fprintln(os.Stderr, role+":", msg) },
	})
	return err
}

// child is a holder the tool started, and what it said.
type child struct {
	role   string
	cmd    *exec.Cmd
	source string
	seen   chan seenEvent
}

type seenEvent struct {
	event string
	pid   int
	at    time.Time
}

func start(role, program string) (*child, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &child{role: role, cmd: exec.Command(self, "-holder", role, "-program", program), seen: make(chan seenEvent, 64)}
	c.cmd.Stderr = os.Stderr
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() {
		return nil, fmt.Errorf("%s holder: no waiting line", role)
	}
	c.source = strings.TrimPrefix(lines.Text(), "waiting ")
	go func() {
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) != 3 {
				continue
			}
			pid, _ := strconv.Atoi(f[1])
			ns, _ := strconv.ParseInt(f[2], 10, 64)
			c.seen <- seenEvent{f[0], pid, time.Unix(0, ns)}
		}
	}()
	return c, nil
}

// await is when c saw event for pid.
func (c *child) await(event string, pid int) (time.Time, error) {
	timeout := time.After(10 * time.Second)
	for {
		select {
		case e := <-c.seen:
			if e.event == event && e.pid == pid {
				return e.at, nil
			}
		case <-timeout:
			return time.Time{}, fmt.Errorf("%s holder: no %s of %d within 10 s", c.role, event, pid)
		}
	}
}

func run(span time.Duration, starts int, every time.Duration) error {
	if os.Geteuid() != 0 {
		return errors.New("run as root: the holders open /dev/cpu_dma_latency")
	}
	dir, err := os.MkdirTemp("", "while-events-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return err
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		return err
	}
	program := filepath.Join(dir, fmt.Sprintf("while-ev-%d", os.Getpid()))
	if err := os.WriteFile(program, data, 0o700); err != nil {
		return err
	}
	var holders []*child
	for _, role := range []string{"events", "scan"} {
		c, err := start(role, program)
		if err != nil {
			return err
		}
		defer func() { c.cmd.Process.Signal(syscall.SIGINT); c.cmd.Wait() }()
		holders = append(holders, c)
		fmt.Printf("%s holder: pid %d, source %s\n", role, c.cmd.Process.Pid, c.source)
	}
	if holders[0].source != timerstate.SourceEvents+"|" {
		return fmt.Errorf("the events holder has no process events: %s", holders[0].source)
	}
	// The tool counts the programs started on the machine meanwhile
	// (execs and main-thread renames the kernel announces), with a
	// source of its own: "idle" is the machine as it is.
	execs, err := platform.NewSystem().ProgramEvents(nil)
	if err != nil {
		return err
	}
	defer execs.Close()
	execs.Track([]int{})
	counted := make(chan int)
	count := func() {
		n := 0
		for {
			select {
			case <-execs.Ready():
				n += len(execs.Take(true).Ran)
			case counted <- n:
				n = 0
			}
		}
	}
	go count()
	time.Sleep(5 * time.Second) // start-up is not idle
	<-counted

	// CPU while nothing starts, then with a process every 200 ms.
	idle, err := cpuOver(holders, span)
	if err != nil {
		return err
	}
	idleExecs := <-counted
	stopChurn := make(chan struct{})
	churned := make(chan int)
	go func() {
		n := 0
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stopChurn:
				churned <- n
				return
			case <-t.C:
				exec.Command("true").Run()
				n++
			}
		}
	}()
	busy, err := cpuOver(holders, span)
	close(stopChurn)
	n := <-churned
	busyExecs := <-counted
	if err != nil {
		return err
	}

	// Reaction: the program started and killed at random moments, so
	// that the scan's phase is not always the same.
	react := map[string]map[string][]time.Duration{}
	for _, c := range holders {
		react[c.role] = map[string][]time.Duration{}
	}
	for range starts {
		time.Sleep(300*time.Millisecond + rand.N(time.Second))
		cmd := exec.Command(program, "60")
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		pid := cmd.Process.Pid
		for _, c := range holders {
			at, err := c.await(hold.EventStarted, pid)
			if err != nil {
				cmd.Process.Kill()
				return err
			}
			react[c.role]["start"] = append(react[c.role]["start"], at.Sub(t0))
		}
		time.Sleep(300*time.Millisecond + rand.N(time.Second))
		t1 := time.Now()
		cmd.Process.Kill()
		cmd.Wait()
		for _, c := range holders {
			at, err := c.await(hold.EventExited, pid)
			if err != nil {
				return err
			}
			react[c.role]["exit"] = append(react[c.role]["exit"], at.Sub(t1))
		}
	}

	fmt.Printf("\nCPU over %v each (schedstat; utime+stime in ticks of 10 ms); processes the churn started: %d\n", span, n)
	fmt.Printf("programs started on the machine (announced): %.1f/s idle, %.1f/s with the churn\n",
		float64(idleExecs)/span.Seconds(), float64(busyExecs)/span.Seconds())
	fmt.Printf("| holder | idle | share of one core | a process every %v | share of one core |\n", every)
	fmt.Println("| --- | --- | --- | --- | --- |")
	for i, c := range holders {
		fmt.Printf("| %s | %.1f ms (%d ms) | %.4f %% | %.1f ms (%d ms) | %.4f %% |\n", c.role,
			ms(idle[i].Ns), idle[i].Ticks*1000/cpushare.ClockTicks, idle[i].Share(span), ms(busy[i].Ns), busy[i].Ticks*1000/cpushare.ClockTicks, busy[i].Share(span))
	}
	fmt.Printf("| events / scan | %.2f | | %.2f | |\n", float64(idle[0].Ns)/float64(idle[1].Ns), float64(busy[0].Ns)/float64(busy[1].Ns))
	fmt.Printf("\nReaction over %d starts and kills (median, 90th percentile, max):\n", starts)
	fmt.Println("| holder | start seen after | exit seen after |")
	fmt.Println("| --- | --- | --- |")
	for _, c := range holders {
		fmt.Printf("| %s | %s | %s |\n", c.role, summary(react[c.role]["start"]), summary(react[c.role]["exit"]))
	}
	m := func(role, what string) time.Duration { return quantile(react[role][what], 0.5) }
	fmt.Printf("| scan / events (medians) | %.0f× | %.0f× |\n",
		float64(m("scan", "start"))/float64(m("events", "start")), float64(m("scan", "exit"))/float64(m("events", "exit")))
	return nil
}

// cpuOver is each holder's CPU time over span.
func cpuOver(holders []*child, span time.Duration) ([]cpushare.Time, error) {
	before := make([]cpushare.Time, len(holders))
	for i, c := range holders {
		var err error
		if before[i], err = cpushare.Read(c.cmd.Process.Pid); err != nil {
			return nil, err
		}
	}
	time.Sleep(span)
	out := make([]cpushare.Time, len(holders))
	for i, c := range holders {
		now, err := cpushare.Read(c.cmd.Process.Pid)
		if err != nil {
			return nil, err
		}
		out[i] = now.Sub(before[i])
	}
	return out, nil
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(int(q*float64(len(s))), len(s)-1)]
}

func summary(d []time.Duration) string {
	r := func(v time.Duration) string {
		if v < 10*time.Millisecond {
			return fmt.Sprintf("%.1f ms", float64(v)/1e6)
		}
		return fmt.Sprintf("%.0f ms", float64(v)/1e6)
	}
	return fmt.Sprintf("%s, %s, %s", r(quantile(d, 0.5)), r(quantile(d, 0.9)), r(slices.Max(d)))
}
