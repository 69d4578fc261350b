package platform

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// procMessage is one connector message as the kernel sends it, in the
// machine's byte order: a process event (what, the thread and its group)
// or, for what procEventNone, an acknowledgement of seq with err.
func procMessage(what, pid, tgid, seq, ack, ackErr uint32) []byte {
	ne := binary.NativeEndian
	data := 24 // what, cpu, timestamp, two ids
	b := make([]byte, procEventAt+data)
	ne.PutUint32(b[0:4], uint32(len(b)))
	ne.PutUint16(b[4:6], unix.NLMSG_DONE)
	cn := b[nlmsgHeaderLen:]
	ne.PutUint32(cn[0:4], cnIdxProc)
	ne.PutUint32(cn[4:8], cnValProc)
	ne.PutUint32(cn[8:12], seq)
	ne.PutUint32(cn[12:16], ack)
	ne.PutUint16(cn[16:18], uint16(data))
	ev := b[procEventAt:]
	ne.PutUint32(ev[0:4], what)
	if what == procEventNone {
		ne.PutUint32(ev[procDataAt:], ackErr)
	} else {
		ne.PutUint32(ev[procDataAt:], pid)
		ne.PutUint32(ev[procDataAt+4:], tgid)
	}
	return b
}

// TestDecodeProcEvents decodes what one read may give: several messages,
// another connector's (skipped), netlink's own (skipped), an
// acknowledgement; a message whose length does not fit fails.
func TestDecodeProcEvents(t *testing.T) {
	other := procMessage(procEventExec, 9, 9, 0, 0, 0)
	binary.NativeEndian.PutUint32(other[nlmsgHeaderLen:], 4) // another connector's index
	noop := procMessage(procEventExec, 8, 8, 0, 0, 0)
	binary.NativeEndian.PutUint16(noop[4:6], unix.NLMSG_NOOP)
	var buf []byte
	for _, m := range [][]byte{
		procMessage(procEventExec, 100, 100, 0, 0, 0),
		other,
		procMessage(procEventExit, 101, 100, 0, 0, 0),
		noop,
		procMessage(procEventNone, 0, 0, 7, 1, uint32(unix.EPERM)),
		procMessage(procEventComm, 102, 102, 0, 0, 0),
	} {
		buf = append(buf, m...)
	}
	var got []procEvent
	if err := decodeProcEvents(buf, func(e procEvent) { got = append(got, e) }); err != nil {
		t.Fatal(err)
	}
	want := []procEvent{
		{what: procEventExec, pid: 100, tgid: 100},
		{what: procEventExit, pid: 101, tgid: 100},
		{what: procEventNone, ackErr: uint32(unix.EPERM), ack: 1},
		{what: procEventComm, pid: 102, tgid: 102},
	}
	if !slices.Equal(got, want) {
		t.Errorf("decoded %+v, want %+v", got, want)
	}
	long := procMessage(procEventExec, 1, 1, 0, 0, 0)
	binary.NativeEndian.PutUint32(long[0:4], uint32(len(long)+4))
	if err := decodeProcEvents(long, func(procEvent) {}); err == nil {
		t.Error("a message longer than the read decoded")
	}
	data := procMessage(procEventExec, 1, 1, 0, 0, 0)
	binary.NativeEndian.PutUint16(data[nlmsgHeaderLen+16:], 200)
	if err := decodeProcEvents(data, func(procEvent) {}); err == nil {
		t.Error("a connector message with more data than the read decoded")
	}
}

// FuzzDecodeProcEvents: whatever a read gives, the decoder neither
// panics nor loops, and an event it gives came from a message that fits.
func FuzzDecodeProcEvents(f *testing.F) {
	f.Add(procMessage(procEventExec, 100, 100, 0, 0, 0))
	f.Add(append(procMessage(procEventExit, 5, 4, 0, 0, 0), procMessage(procEventNone, 0, 0, 3, 1, 1)...))
	f.Add([]byte{})
	f.Add(make([]byte, nlmsgHeaderLen))
	f.Fuzz(func(t *testing.T, buf []byte) {
		n := 0
		_ = decodeProcEvents(buf, func(e procEvent) {
			n++
			if e.what == procEventNone && (e.pid != 0 || e.tgid != 0) {
				t.Fatalf("an acknowledgement with process ids: %+v", e)
			}
		})
		// Each event takes at least a header and the event's fixed part.
		if n*(procEventAt+procDataAt+8) > len(buf) {
			t.Fatalf("%d events from %d bytes", n, len(buf))
		}
	})
}

// TestListenMessage: the request decodes as the connector's, of the
// operation's 4 bytes.
func TestListenMessage(t *testing.T) {
	m := listenMessage(42)
	ne := binary.NativeEndian
	if int(ne.Uint32(m[0:4])) != len(m) || ne.Uint16(m[4:6]) != unix.NLMSG_DONE {
		t.Errorf("netlink header %x", m[:nlmsgHeaderLen])
	}
	cn := m[nlmsgHeaderLen:]
	if ne.Uint32(cn[0:4]) != cnIdxProc || ne.Uint32(cn[4:8]) != cnValProc || ne.Uint32(cn[12:16]) != 42 || ne.Uint16(cn[16:18]) != 4 {
		t.Errorf("connector header %x", cn[:cnMsgLen])
	}
	if ne.Uint32(m[procEventAt:]) != procCnMcastListen {
		t.Errorf("operation %x", m[procEventAt:])
	}
}

// openOrSkip opens the connector, or skips where the kernel offers none
// to this process (a container's namespaces; before Linux 6.6, a user
// without CAP_NET_ADMIN).
func openOrSkip(t *testing.T) *procEvents {
	t.Helper()
	pe, err := openProcEvents(nil, 2*time.Second)
	if errors.Is(err, errNoAnswer) || errors.Is(err, unix.EPERM) {
		t.Skipf("no process connector here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return pe
}

// TestProcEventsSeeAChild: as root (any user since Linux 6.6), where
// the kernel offers the connector, a child started and ended is announced: an exec of its
// process id, then an exit of its thread group. That is all the kernel
// promises; when the events come is not asserted.
func TestProcEventsSeeAChild(t *testing.T) {
	pe := openOrSkip(t)
	defer pe.Close()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	var ran, exited bool
	timeout := time.After(10 * time.Second)
	for !ran || !exited {
		select {
		case <-pe.Ready():
		case <-timeout:
			t.Fatalf("after 10 s, process %d announced: executed %v, exited %v", pid, ran, exited)
		}
		c := pe.Take(true)
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		// An overrun may lose the child's events: a busy machine, not a
		// failure of the source.
		if c.Lost && (!ran || !exited) {
			t.Skip("events were lost (the machine is busy): the child's may be among them")
		}
		ran = ran || slices.Contains(c.Ran, pid)
		exited = exited || slices.Contains(c.Exited, pid)
	}
}

// TestProcEventsClose: Close ends the reader, which was blocked in a
// read, and a second Close does nothing.
func TestProcEventsClose(t *testing.T) {
	pe := openOrSkip(t)
	pe.Close()
	pe.Close()
	select {
	case <-pe.done:
	default:
		t.Fatal("the reader still runs after Close")
	}
	if c := pe.Take(true); c.Err != nil {
		t.Errorf("Close was taken for a failure: %v", c.Err)
	}
}

// TestScanRereadsAnOldProcess: a process the scanner has long known
// (past youngScans, and not at its turn to be read again) that executes
// a watched program keeping its id is not found by the next scan, by the
// scanner's own rules, but is once an event source said it executed
// something (Hint), reading it alone or with every process; All rereads
// every process the same.
func TestScanRereadsAnOldProcess(t *testing.T) {
	for _, hint := range []string{"only", "with the rest", "all"} {
		t.Run(hint, func(t *testing.T) {
			dir := t.TempDir()
			game := program(t, dir, "tswev"+strconv.Itoa(os.Getpid()))
			shell := copyProgram(t, "sh", dir, "tswold"+strconv.Itoa(os.Getpid()))
			execute := filepath.Join(dir, "exec")
			sc, err := newProcScanner("/proc", []string{filepath.Base(game)})
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			cmd := start(t, shell, "-c", `while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" 30`, execute, game)
			pid := cmd.Process.Pid
			poll(t, "seen the shell", func() bool {
				scanFor(t, sc)
				e := sc.entries[pid]
				return e != nil && !e.kernel && sc.scan-e.first >= youngScans
			})
			// The next scan must not be the shell's turn to be read again.
			for (sc.scan+1)%rotateScans == uint64(pid)%rotateScans || (sc.scan+2)%rotateScans == uint64(pid)%rotateScans {
				scanFor(t, sc)
			}
			if err := os.WriteFile(execute, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			poll(t, "executed the game", func() bool { return procField(pid, "comm") == filepath.Base(game) })
			if _, ok := scanFor(t, sc)[pid]; ok {
				t.Skip("the scan found it without being told (its rules changed): nothing to show")
			}
			switch hint {
			case "only":
				sc.Hint(seam.ScanHint{PIDs: []int{pid}, Only: true})
			case "with the rest":
				sc.Hint(seam.ScanHint{PIDs: []int{pid}})
			default:
				sc.Hint(seam.ScanHint{All: true})
			}
			if _, ok := scanFor(t, sc)[pid]; !ok {
				t.Errorf("told that process %d executed something, the scan did not find it running %s", pid, filepath.Base(game))
			}
		})
	}
}

// runFilter runs a classic BPF program on a message as the kernel does,
// for the instructions procFilter uses: it returns how many bytes are
// kept (0: dropped).
func runFilter(t *testing.T, prog []unix.SockFilter, msg []byte) uint32 {
	t.Helper()
	var a, x uint32
	for pc := 0; pc < len(prog); pc++ {
		in := prog[pc]
		switch in.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			if int(in.K)+4 > len(msg) {
				return 0
			}
			a = binary.BigEndian.Uint32(msg[in.K:])
		case unix.BPF_MISC | unix.BPF_TAX:
			x = a
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_X:
			v := in.K
			if in.Code&unix.BPF_X != 0 {
				v = x
			}
			if a == v {
				pc += int(in.Jt)
			} else {
				pc += int(in.Jf)
			}
		case unix.BPF_RET | unix.BPF_K:
			return in.K
		default:
			t.Fatalf("instruction %d: code %#x not interpreted", pc, in.Code)
		}
	}
	t.Fatal("the program ran off its end")
	return 0
}

// TestProcFilter: the socket keeps what a hold uses and drops the rest,
// by the exits it is told to keep.
func TestProcFilter(t *testing.T) {
	const procEventFork = 1
	for _, c := range []struct {
		name  string
		exits []int
		msg   []byte
		keep  bool
	}{
		{"exec", []int{}, procMessage(procEventExec, 10, 10, 0, 0, 0), true},
		{"acknowledgement", []int{}, procMessage(procEventNone, 0, 0, 0, 5, 0), true},
		{"fork", nil, procMessage(procEventFork, 10, 10, 0, 0, 0), false},
		{"main thread renamed", []int{}, procMessage(procEventComm, 10, 10, 0, 0, 0), true},
		{"other thread renamed", []int{}, procMessage(procEventComm, 11, 10, 0, 0, 0), false},
		{"exit, every exit kept", nil, procMessage(procEventExit, 11, 10, 0, 0, 0), true},
		{"exit, none kept", []int{}, procMessage(procEventExit, 10, 10, 0, 0, 0), false},
		{"exit of a thread of a group kept", []int{7, 10}, procMessage(procEventExit, 11, 10, 0, 0, 0), true},
		{"exit of another group", []int{7, 10}, procMessage(procEventExit, 12, 12, 0, 0, 0), false},
		{"short message", nil, procMessage(procEventExec, 1, 1, 0, 0, 0)[:procWhatAt+2], false},
	} {
		got := runFilter(t, procFilter(c.exits, nil), c.msg) != 0
		if got != c.keep {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.keep)
		}
	}
	many := make([]int, maxTracked)
	for i := range many {
		many[i] = 1000 + i
	}
	if got := runFilter(t, procFilter(many, nil), procMessage(procEventExit, 1000+maxTracked-1, 1000+maxTracked-1, 0, 0, 0)); got == 0 {
		t.Error("the last of maxTracked groups' exit dropped")
	}
}

// renameMessage is a connector message announcing that the thread pid of
// the group tgid renamed itself to comm.
func renameMessage(pid, tgid uint32, comm string) []byte {
	ne := binary.NativeEndian
	data := procCommAt + options.CommLen + 1
	b := make([]byte, procEventAt+data)
	ne.PutUint32(b[0:4], uint32(len(b)))
	ne.PutUint16(b[4:6], unix.NLMSG_DONE)
	cn := b[nlmsgHeaderLen:]
	ne.PutUint32(cn[0:4], cnIdxProc)
	ne.PutUint32(cn[4:8], cnValProc)
	ne.PutUint16(cn[16:18], uint16(data))
	ev := b[procEventAt:]
	ne.PutUint32(ev[0:4], procEventComm)
	ne.PutUint32(ev[procDataAt:], pid)
	ne.PutUint32(ev[procDataAt+4:], tgid)
	copy(ev[procCommAt:procCommAt+options.CommLen], comm)
	return b
}

// TestProcFilterNames: told the programs' short names, the socket keeps
// a main thread's rename to one of them, or any rename of a thread group
// whose exits it keeps, and drops other renames; execs stay. At the most
// names and groups it tells apart, its jumps still reach.
func TestProcFilterNames(t *testing.T) {
	const fifteen = "fifteen-bytes-x"
	names := []string{"game", fifteen}
	for _, c := range []struct {
		name  string
		exits []int
		names []string
		msg   []byte
		keep  bool
	}{
		{"rename to a name", []int{}, names, renameMessage(10, 10, "game"), true},
		{"rename to a name of 15 bytes", []int{}, names, renameMessage(10, 10, fifteen), true},
		{"rename to a longer name", []int{}, names, renameMessage(10, 10, "gamex"), false},
		{"rename to a shorter name", []int{}, names, renameMessage(10, 10, "gam"), false},
		{"rename to another name", []int{}, names, renameMessage(10, 10, "other"), false},
		{"other thread renamed to a name", []int{}, names, renameMessage(11, 10, "game"), false},
		{"watched process renamed", []int{7, 10}, names, renameMessage(10, 10, "other"), true},
		{"other process renamed, some watched", []int{7, 10}, names, renameMessage(12, 12, "other"), false},
		{"every exit kept, rename to a name", nil, names, renameMessage(10, 10, "game"), true},
		{"every exit kept, rename to another name", nil, names, renameMessage(10, 10, "other"), false},
		{"no names", []int{}, nil, renameMessage(10, 10, "other"), true},
		{"exec", []int{}, names, procMessage(procEventExec, 10, 10, 0, 0, 0), true},
		{"exit of a watched process", []int{7, 10}, names, procMessage(procEventExit, 11, 10, 0, 0, 0), true},
		{"exit of another", []int{7, 10}, names, procMessage(procEventExit, 12, 12, 0, 0, 0), false},
	} {
		got := runFilter(t, procFilter(c.exits, c.names), c.msg) != 0
		if got != c.keep {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.keep)
		}
	}
	many := make([]int, maxTracked)
	for i := range many {
		many[i] = 1000 + i
	}
	var most []string
	for i := range maxFilterNames {
		most = append(most, fmt.Sprintf("pr-%012d", i))
	}
	prog := procFilter(many, most)
	last := uint32(many[len(many)-1])
	for _, c := range []struct {
		name string
		msg  []byte
		keep bool
	}{
		{"rename to the last name", renameMessage(5, 5, most[len(most)-1]), true},
		{"rename to another name", renameMessage(5, 5, "pr-9"), false},
		{"the last group's rename", renameMessage(last, last, "other"), true},
		{"the last group's exit", procMessage(procEventExit, last, last, 0, 0, 0), true},
		{"another group's exit", procMessage(procEventExit, 5, 5, 0, 0, 0), false},
	} {
		if got := runFilter(t, prog, c.msg) != 0; got != c.keep {
			t.Errorf("at the most names and groups, %s: kept %v, want %v", c.name, got, c.keep)
		}
	}
	for i := range maxFilterNames + 1 {
		most = append(most, fmt.Sprintf("pr-%012d", maxFilterNames+i))
	}
	if got := filterNames([]options.Program{options.NewProgram("game", false, nil)}); !slices.Equal(got, []string{"game"}) {
		t.Errorf("filterNames of game: %q", got)
	}
	var programs []options.Program
	for _, name := range most {
		programs = append(programs, options.NewProgram(name, false, nil))
	}
	if got := filterNames(programs); got != nil {
		t.Errorf("filterNames past maxFilterNames: %q, want nil (every rename)", got)
	}
	if got := filterNames(nil); got != nil {
		t.Errorf("filterNames of every process: %q, want nil", got)
	}
}

// TestProcEventsSeeARename: as root, a source opened for a program
// announces a process that renames its main thread to the program's
// name, which the socket's filter keeps as the kernel lays the name out.
func TestProcEventsSeeARename(t *testing.T) {
	name := "tsc-rn-" + strconv.Itoa(os.Getpid()%100000)
	pe, err := openProcEvents([]string{name}, 2*time.Second)
	if errors.Is(err, errNoAnswer) || errors.Is(err, unix.EPERM) {
		t.Skipf("no process connector here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pe.Close()
	pe.Track([]int{})
	sh := exec.Command("sh", "-c", `printf other > /proc/$$/comm && printf %s "$0" > /proc/$$/comm && read x`, name)
	stdin, err := sh.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); sh.Wait() }()
	timeout := time.After(10 * time.Second)
	for ran := false; !ran; {
		select {
		case <-pe.Ready():
		case <-timeout:
			t.Fatalf("after 10 s: the rename of %d to %s not announced", sh.Process.Pid, name)
		}
		c := pe.Take(true)
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		if c.Lost {
			t.Skip("events were lost (the machine is busy)")
		}
		ran = slices.Contains(c.Ran, sh.Process.Pid)
	}
}

// TestProcEventsTrack: as root, told to keep no exits, the source
// announces a child's exec but not its exit; told to keep the child's, it
// announces the child as exited at once (its exit may have come before
// the filter did), then its exit.
func TestProcEventsTrack(t *testing.T) {
	pe := openOrSkip(t)
	defer pe.Close()
	pe.Track([]int{})
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	pid := sleeper.Process.Pid
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	// The child runs: its exec has been announced, or is on its way.
	other := exec.Command("true")
	if err := other.Run(); err != nil {
		t.Fatal(err)
	}
	var ran bool
	until := func(what string) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for exited := false; !exited; {
			select {
			case <-pe.Ready():
			case <-timeout:
				t.Fatalf("after 10 s: no %s of %d (exec announced %v)", what, pid, ran)
			}
			c := pe.Take(true)
			if c.Err != nil {
				t.Fatal(c.Err)
			}
			if c.Lost {
				t.Skip("events were lost (the machine is busy)")
			}
			ran = ran || slices.Contains(c.Ran, pid)
			exited = slices.Contains(c.Exited, pid)
			if slices.Contains(c.Exited, other.Process.Pid) {
				t.Errorf("the exit of %d, not tracked, was announced", other.Process.Pid)
			}
		}
	}
	pe.Track([]int{pid})
	until("announcement on being tracked")
	sleeper.Process.Kill()
	sleeper.Wait()
	until("exit")
	for !ran {
		select {
		case <-pe.Ready():
		case <-time.After(10 * time.Second):
			t.Fatalf("after 10 s: the exec of %d not announced", pid)
		}
		ran = slices.Contains(pe.Take(true).Ran, pid)
	}
}

// TestConnectorSockets reads /proc/net/netlink's table: only the process
// connector's sockets that joined the process events' group count.
func TestConnectorSockets(t *testing.T) {
	table := "sk               Eth Pid        Groups   Rmem     Wmem     Dump  Locks    Drops    Inode\n" +
		"00000000d07494fd 0   0          00000000 0        0        0     2        0        4\n" +
		"0000000099c2e1f2 11  4242       00000001 0        0        0     2        0        9001\n" +
		"0000000099c2e1f3 11  0          00000000 0        0        0     2        0        9002\n" +
		"0000000099c2e1f4 11  77         00000003 0        0        0     2        0        9003\n" +
		"0000000099c2e1f5 11  77         zz 0 0 0 2 0 9004\n" +
		"short line\n"
	got := connectorSockets([]byte(table))
	if len(got) != 2 || !got[9001] || !got[9003] {
		t.Errorf("connector sockets %v, want 9001 and 9003", got)
	}
}

// FuzzConnectorSockets: whatever the table holds, the reader neither
// panics nor finds a socket of inode 0.
func FuzzConnectorSockets(f *testing.F) {
	f.Add([]byte("sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode\n0 11 1 00000001 0 0 0 2 0 5\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if connectorSockets(data)[0] {
			t.Fatal("a socket of inode 0")
		}
	})
}

// TestListensToProgramEvents: as root where the kernel offers the
// connector, this process listens while its source is open, and not
// once it is closed.
func TestListensToProgramEvents(t *testing.T) {
	pe := openOrSkip(t)
	listens, err := system{}.ListensToProgramEvents(os.Getpid())
	if err != nil || !listens {
		t.Errorf("with a source open: listens %v, %v", listens, err)
	}
	pe.Close()
	if listens, err := (system{}).ListensToProgramEvents(os.Getpid()); err != nil || listens {
		t.Errorf("with the source closed: listens %v, %v", listens, err)
	}
}

// TestProcEventsOnlyPrograms: as root, a source opened for a program
// announces that program's exec, and not the exec of another program
// that came before it (the kernel sends one socket's events in order).
func TestProcEventsOnlyPrograms(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip(err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	program := filepath.Join(t.TempDir(), "tsc-ev-"+strconv.Itoa(os.Getpid()%100000))
	if err := os.WriteFile(program, data, 0o700); err != nil {
		t.Fatal(err)
	}
	pe, err := openProcEvents([]string{program}, 2*time.Second)
	if errors.Is(err, errNoAnswer) || errors.Is(err, unix.EPERM) {
		t.Skipf("no process connector here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer pe.Close()
	pe.Track([]int{})
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { other.Process.Kill(); other.Wait() }()
	watched := exec.Command(program, "30")
	if err := watched.Start(); err != nil {
		skipIfNoExec(t, err)
		t.Fatal(err)
	}
	defer func() { watched.Process.Kill(); watched.Wait() }()
	timeout := time.After(10 * time.Second)
	for ran := false; !ran; {
		select {
		case <-pe.Ready():
		case <-timeout:
			t.Fatalf("after 10 s: the exec of %d (%s) not announced", watched.Process.Pid, program)
		}
		c := pe.Take(true)
		if c.Err != nil {
			t.Fatal(c.Err)
		}
		if c.Lost {
			t.Skip("events were lost (the machine is busy)")
		}
		if slices.Contains(c.Ran, other.Process.Pid) {
			t.Errorf("the exec of %d, running sleep, was announced", other.Process.Pid)
		}
		ran = slices.Contains(c.Ran, watched.Process.Pid)
	}
}

// TestMayRun: an exec is kept when the process's comm is a program's
// short name, or the process is watched whatever its name; a rename by
// the name its event carries; an exec of a process gone is not; with no
// programs, everything is.
func TestMayRun(t *testing.T) {
	self := os.Getpid()
	comm, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(string(comm), "\n")
	const gone = 1<<22 + 1 // past any pid_max
	exec := procEvent{what: procEventExec, pid: uint32(self), tgid: uint32(self)}
	for _, c := range []struct {
		what     string
		programs []string
		watched  []int
		e        procEvent
		want     bool
	}{
		{"exec of a program's name", []string{"other", name}, nil, exec, true},
		{"exec of another name", []string{"other"}, nil, exec, false},
		{"exec of a watched process", []string{"other"}, []int{self}, exec, true},
		{"exec of a process gone", []string{name}, nil, procEvent{what: procEventExec, pid: gone, tgid: gone}, false},
		{"rename to a program's name", []string{"other"}, nil, procEvent{what: procEventComm, pid: gone, tgid: gone, comm: "other"}, true},
		{"rename to another name", []string{"other"}, nil, procEvent{what: procEventComm, pid: gone, tgid: gone, comm: "else"}, false},
		{"no programs", nil, nil, procEvent{what: procEventExec, pid: gone, tgid: gone}, true},
	} {
		pe := &procEvents{watched: map[int]bool{}, comm: make([]byte, 64)}
		if c.programs != nil {
			for _, p := range c.programs {
				pe.programs = append(pe.programs, options.NewProgram(p, false, nil))
			}
		}
		for _, pid := range c.watched {
			pe.watched[pid] = true
		}
		if got := pe.mayRun(c.e); got != c.want {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
}

// TestReadPace: readBurst reads at once, then one every readEvery; a
// pause earns the burst back, and no more.
func TestReadPace(t *testing.T) {
	t0 := time.Unix(1000, 0)
	p := newReadPace(time.Second, 3, t0)
	for i := range 3 {
		if w := p.wait(t0); w != 0 {
			t.Fatalf("read %d of the burst waits %v", i, w)
		}
		p.spend(t0)
	}
	if w := p.wait(t0); w != time.Second {
		t.Fatalf("after the burst: wait %v, want 1s", w)
	}
	if w := p.wait(t0.Add(400 * time.Millisecond)); w != 600*time.Millisecond {
		t.Fatalf("0.4 s later: wait %v, want 0.6s", w)
	}
	t1 := t0.Add(time.Minute)
	for i := range 3 {
		if w := p.wait(t1); w != 0 {
			t.Fatalf("after a pause, read %d waits %v", i, w)
		}
		p.spend(t1)
	}
	if w := p.wait(t1); w != time.Second {
		t.Fatalf("a pause earned more than the burst: wait %v", w)
	}
}

// skipIfNoExec skips the test when err, of starting a copy of a program
// in a test's temporary directory, is a refusal to execute it: the
// directory (TMPDIR, GOTMPDIR) is on a file system mounted noexec.
func skipIfNoExec(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("cannot execute a program copied to the test's temporary directory (TMPDIR or GOTMPDIR mounted noexec?): %v", err)
	}
}

// within runs f, and fails the test when f has not returned 10 s later.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s has not returned after 10 s", what)
	}
}

// TestProcEventsDrainIsBounded: from a socket that never runs dry (as
// processes that rename their main thread in a loop keep it), a drain
// returns after maxDrainReads reads, saying it read some; and while the
// reader drains it, Take, Track and Close return.
func TestProcEventsDrainIsBounded(t *testing.T) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_CONNECTOR)
	if err != nil {
		t.Skipf("no connector socket here: %v", err)
	}
	wakeClose, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	pe := newProcEvents(fd, wakeClose, []options.Program{options.NewProgram("tsc-never-runs", false, nil)})
	rename := procMessage(procEventComm, 77, 77, 0, 0, 0)
	var reads atomic.Int64
	readerReads := make(chan struct{})
	pe.recv = func(_ int, buf []byte) (int, error) {
		if reads.Add(1) == maxDrainReads+1 {
			close(readerReads)
		}
		return copy(buf, rename), nil
	}
	var some bool
	within(t, "a drain", func() { some, err = pe.drain() })
	if !some || err != nil {
		t.Fatalf("a drain at its bound: some %v, err %v; want true, nil", some, err)
	}
	if got := reads.Load(); got != maxDrainReads {
		t.Fatalf("a drain read %d times, want %d", got, maxDrainReads)
	}
	pe.askWake()
	go pe.read()
	<-readerReads
	within(t, "Take", func() {
		if c := pe.Take(true); c.Err != nil || c.Lost || len(c.Ran) > 0 {
			t.Errorf("Take of renames to another name: %+v", c)
		}
	})
	within(t, "Track", func() { pe.Track([]int{77}) })
	within(t, "Close", pe.Close)
}
