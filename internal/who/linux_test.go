package who

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tickscope/tickscope/internal/printable"
)

// stat is a /proc/PID/stat line with comm, flags, rt_priority and policy
// in their places (fields 2, 9, 40 and 41).
func stat(pid int, comm string, flags uint64, rtprio, policy int) string {
	fields := make([]string, 0, 50)
	fields = append(fields, "S")                      // 3
	fields = append(fields, "1", "1", "1", "0", "-1") // 4..8
	fields = append(fields, fmt.Sprint(flags))        // 9
	for n := 10; n <= 39; n++ {
		fields = append(fields, "0")
	}
	fields = append(fields, fmt.Sprint(rtprio), fmt.Sprint(policy)) // 40, 41
	fields = append(fields, "0", "0", "0")
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(fields, " "))
}

// tree is a fake / for ScanLinux.
type tree struct{ fstest.MapFS }

func newTree() tree { return tree{fstest.MapFS{}} }

func (t tree) process(pid int, comm string, flags uint64) {
	t.MapFS[fmt.Sprintf("proc/%d/stat", pid)] = &fstest.MapFile{Data: []byte(stat(pid, comm, flags, 0, 0))}
	t.MapFS[fmt.Sprintf("proc/%d/fd/0", pid)] = &fstest.MapFile{Data: []byte("/dev/pts/0"), Mode: fs.ModeSymlink}
}

func (t tree) thread(pid, tid int, comm string, slack string, rtprio, policy int) {
	t.MapFS[fmt.Sprintf("proc/%d/task/%d/stat", pid, tid)] = &fstest.MapFile{Data: []byte(stat(tid, comm, 0, rtprio, policy))}
	if slack != "" {
		t.MapFS[fmt.Sprintf("proc/%d/timerslack_ns", tid)] = &fstest.MapFile{Data: []byte(slack + "\n")}
	}
}

func (t tree) fd(pid, fd int, target string) {
	t.MapFS[fmt.Sprintf("proc/%d/fd/%d", pid, fd)] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink}
}

func (t tree) idle(cpu, state int, name, disable string) {
	dir := fmt.Sprintf("sys/devices/system/cpu/cpu%d/cpuidle/state%d/", cpu, state)
	t.MapFS[dir+"disable"] = &fstest.MapFile{Data: []byte(disable + "\n")}
	t.MapFS[dir+"name"] = &fstest.MapFile{Data: []byte(name + "\n")}
}

// denyFS refuses to open paths under the prefixes, as /proc does to
// another user's process.
type denyFS struct {
	tree
	prefixes []string
}

func (d denyFS) denied(name string) bool {
	for _, p := range d.prefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func (d denyFS) Open(name string) (fs.File, error) {
	if d.denied(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.tree.Open(name)
}

func (d denyFS) ReadLink(name string) (string, error) {
	if d.denied(name) {
		return "", &fs.PathError{Op: "readlink", Path: name, Err: fs.ErrPermission}
	}
	return d.tree.ReadLink(name)
}

func (d denyFS) ReadFile(name string) ([]byte, error) {
	if d.denied(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.tree.ReadFile(name)
}

func (d denyFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if d.denied(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return d.tree.ReadDir(name)
}

func (d denyFS) Lstat(name string) (fs.FileInfo, error) { return d.tree.Lstat(name) }

func TestScanLinux(t *testing.T) {
	seven := int32(7)
	tr := newTree()
	tr.process(1, "systemd", 0)
	tr.thread(1, 1, "systemd", "50000", 0, 0)
	tr.process(100, "tickscope", 0) // holds the device, and a thread with 1 µs slack
	tr.fd(100, 3, DMALatencyDevice)
	tr.thread(100, 100, "tickscope", "50000", 0, 0)
	tr.thread(100, 101, "tickscope", "1000", 0, 0)
	tr.process(200, "sleep (x) y", 0) // comm with parentheses and spaces
	tr.thread(200, 200, "sleep (x) y", "1000", 0, 0)
	tr.process(300, "audio", 0) // a SCHED_FIFO thread: listed as real-time, not for its slack
	tr.thread(300, 300, "audio", "50000", 0, 0)
	tr.thread(300, 301, "audio rt", "0", 80, schedFIFO)
	tr.thread(300, 302, "audio rr", "0", 10, schedRR)
	tr.process(400, "\x1b[2Kforged\n", 0) // a name that would drive the terminal
	tr.thread(400, 400, "\x1b[2Kforged\n", "1000", 0, 0)
	tr.process(2, "kthreadd", pfKthread)
	tr.MapFS["proc/3/stat"] = &fstest.MapFile{Data: []byte(stat(3, "migration/0", pfKthread, 99, schedFIFO))}
	tr.MapFS["proc/self"] = &fstest.MapFile{Data: []byte("100"), Mode: fs.ModeSymlink}
	tr.idle(0, 0, "POLL", "0")
	tr.idle(0, 1, "C1", "1")
	tr.idle(1, 1, "C1", "1")
	tr.idle(1, 2, "C6", "1")
	tr.idle(0, 2, "C6", "0")

	got := ScanLinux(tr, DMALatency{Us: &seven}, 100)
	want := &Linux{
		CPUDMALatencyUs:   &seven,
		DMALatencyHolders: []Process{{PID: 100, Name: "tickscope", Self: true}},
		DefaultSlackNs:    DefaultSlackNs,
		Slack: []Thread{
			{PID: 100, TID: 101, Name: "tickscope", SlackNs: 1000},
			{PID: 200, TID: 200, Name: "sleep (x) y", SlackNs: 1000},
			{PID: 400, TID: 400, Name: "\x1b[2Kforged\n", SlackNs: 1000},
		},
		RealTime: []Thread{
			{PID: 300, TID: 301, Name: "audio rt", Policy: "SCHED_FIFO", Priority: 80},
			{PID: 300, TID: 302, Name: "audio rr", Policy: "SCHED_RR", Priority: 10},
		},
		RealTimeKernelThreads: 1,
		IdleDisabled:          []IdleState{{State: "state1", Name: "C1", CPUs: []int{0, 1}}, {State: "state2", Name: "C6", CPUs: []int{1}}},
		Unreadable:            []Unreadable{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ScanLinux =\n%+v\nwant\n%+v", got, want)
	}
}

// Without root, another user's fd directory and slack files are refused:
// the scan says so, counts them, and lists only what it saw.
func TestScanLinuxSaysWhatItCouldNotRead(t *testing.T) {
	tr := newTree()
	tr.process(10, "mine", 0)
	tr.thread(10, 10, "mine", "2000", 0, 0)
	tr.process(20, "theirs", 0)
	tr.fd(20, 3, DMALatencyDevice)
	tr.thread(20, 20, "theirs", "1000", 0, 0)
	tr.thread(20, 21, "theirs rt", "", 50, schedFIFO) // stat is world-readable
	fsys := denyFS{tr, []string{"proc/20/fd", "proc/20/timerslack_ns"}}

	got := ScanLinux(fsys, DMALatency{Err: errors.New("open /dev/cpu_dma_latency: permission denied")}, 10)
	if len(got.DMALatencyHolders) != 0 {
		t.Errorf("holders = %v, want none seen", got.DMALatencyHolders)
	}
	if want := []Thread{{PID: 10, TID: 10, Name: "mine", SlackNs: 2000}}; !reflect.DeepEqual(got.Slack, want) {
		t.Errorf("slack = %v, want %v", got.Slack, want)
	}
	if len(got.RealTime) != 1 || got.RealTime[0].TID != 21 {
		t.Errorf("realtime = %v, want thread 21", got.RealTime)
	}
	if got.CPUDMALatencyUs != nil {
		t.Errorf("value in force = %d, want nil (unreadable)", *got.CPUDMALatencyUs)
	}
	var whats []string
	for _, u := range got.Unreadable {
		whats = append(whats, u.What+": "+u.Why)
	}
	joined := strings.Join(whats, "\n")
	for _, want := range []string{
		"the value in force (/dev/cpu_dma_latency): open /dev/cpu_dma_latency: permission denied",
		"the open files of 1 processes (/proc/PID/fd)",
		"the timer slack of the threads of 1 processes (/proc/TID/timerslack_ns): permission denied: reading any thread's timer slack but the reader's own needs root (CAP_SYS_NICE), even in the user's own processes",
		"open files are readable only as root",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("unreadable does not say %q:\n%s", want, joined)
		}
	}
}

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Stat
		err  bool
	}{
		{stat(5, "a) (b", pfKthread, 99, 1), Stat{Name: "a) (b", KernelThread: true, Policy: 1, RTPriority: 99}, false},
		{"5 (short) S 1 1 1 0 -1 0", Stat{Name: "short", Policy: -1, RTPriority: -1}, false},
		{"5 (short) S 1 1", Stat{}, true},
		{"no comm", Stat{}, true},
		{"5 (x) S 1 1 1 0 -1 notanumber", Stat{}, true},
		// Any process names itself (prctl PR_SET_NAME, or its executable's
		// name): the name is kept as it is, and output escapes what would
		// drive a terminal. A name that reads as an escape is not one.
		{stat(6, "\x1b]52;c;\a\x1b[2K\r", 0, 0, 0), Stat{Name: "\x1b]52;c;\a\x1b[2K\r", RTPriority: 0, Policy: 0}, false},
		{stat(7, "a\u009bb\x7f\x00\nc", 0, 0, 0), Stat{Name: "a\u009bb\x7f\x00\nc", RTPriority: 0, Policy: 0}, false},
		{stat(8, "bad\xffbyte", 0, 0, 0), Stat{Name: "bad\xffbyte", RTPriority: 0, Policy: 0}, false},
		{stat(9, `lit\x1b`, 0, 0, 0), Stat{Name: `lit\x1b`, RTPriority: 0, Policy: 0}, false},
		{stat(10, "real\x1b", 0, 0, 0), Stat{Name: "real\x1b", RTPriority: 0, Policy: 0}, false},
	} {
		got, err := ParseStat(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseStat(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestScanLinuxKeepsNames: a name is kept as the process gave it, so that
// JSON carries it and two names that differ stay different: lit\x1b typed
// as it is, and lit followed by ESC, which an escaped name
// would both read as lit\x1b.
func TestScanLinuxKeepsNames(t *testing.T) {
	names := map[int]string{500: `lit\x1b`, 501: "lit\x1b", 502: `C:\dir`, 503: "bad\xff"}
	tr := newTree()
	for pid, name := range names {
		tr.process(pid, name, 0)
		tr.fd(pid, 3, DMALatencyDevice)
	}
	l := ScanLinux(tr, DMALatency{}, 1)
	if len(l.DMALatencyHolders) != len(names) {
		t.Fatalf("holders %+v, want %d", l.DMALatencyHolders, len(names))
	}
	data, err := json.Marshal(l)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Holders []struct {
			PID  int    `json:"pid"`
			Name string `json:"name"`
		} `json:"cpu_dma_latency_holders"`
	}
	if err := json.Unmarshal(printable.JSON(data), &back); err != nil {
		t.Fatal(err)
	}
	for i, p := range l.DMALatencyHolders {
		if p.Name != names[p.PID] {
			t.Errorf("process %d: Name %q, want %q", p.PID, p.Name, names[p.PID])
		}
		// JSON strings hold UTF-8: a bad byte reads U+FFFD, as docs/json.md says.
		if want := strings.ToValidUTF8(names[p.PID], "\ufffd"); back.Holders[i].Name != want {
			t.Errorf("process %d: JSON name %q, want %q (%s)", p.PID, back.Holders[i].Name, want, data)
		}
	}
}
