package platform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// ProgramEvents subscribes to the kernel's process-events connector
// (procEvents).
func (system) ProgramEvents(programs []string) (seam.ProgramEvents, error) {
	return openProcEvents(programs, time.Second)
}

// The process-events connector's numbers (include/uapi/linux/connector.h
// and cn_proc.h), which x/sys does not define.
const (
	cnIdxProc         = 1
	cnValProc         = 1
	procCnMcastListen = 1
	procEventNone     = 0x00000000
	procEventExec     = 0x00000002
	procEventComm     = 0x00000200
	procEventExit     = 0x80000000
)

// The layout of a connector message: the netlink header (struct
// nlmsghdr, 16 bytes), the connector's (struct cn_msg, 20 bytes), then
// the event (struct proc_event): what, cpu and a timestamp (16 bytes),
// then the event's data, whose first two fields are, for an exec, a
// rename (comm) and an exit, the thread's id and its thread group's.
const (
	nlmsgHeaderLen = 16
	cnMsgLen       = 20
	procEventAt    = nlmsgHeaderLen + cnMsgLen
	procDataAt     = 16
	// procCommAt is where a rename's new comm (16 bytes, NUL-padded)
	// starts in its event's data.
	procCommAt = procDataAt + 8
	// procWhatAt, procPIDAt and procTGIDAt are offsets in a message.
	procWhatAt = procEventAt
	procPIDAt  = procEventAt + procDataAt
	procTGIDAt = procPIDAt + 4
)

// procEvent is a decoded connector event: what it is, the thread's id
// and its thread group's (a process id), and for an acknowledgement
// (what is procEventNone) its error and the ack number it answers.
type procEvent struct {
	what      uint32
	pid, tgid uint32
	ackErr    uint32
	ack       uint32
	// comm is a rename's new comm ("" for other events).
	comm string
}

// decodeProcEvents decodes the netlink messages a read of the connector
// socket gave, in the machine's byte order, calling each for every
// process event among them; other connectors' messages and netlink's own
// (no-op, overrun) are skipped. It fails on a message whose lengths do
// not fit in buf: what follows cannot be found.
func decodeProcEvents(buf []byte, each func(procEvent)) error {
	ne := binary.NativeEndian
	for len(buf) > 0 {
		if len(buf) < nlmsgHeaderLen {
			return fmt.Errorf("netlink message of %d bytes, shorter than its header", len(buf))
		}
		n := ne.Uint32(buf[0:4])
		if n < nlmsgHeaderLen || uint64(n) > uint64(len(buf)) {
			return fmt.Errorf("netlink message says %d bytes, %d read", n, len(buf))
		}
		msg := buf[:n]
		// Messages are aligned to 4 bytes (NLMSG_ALIGN).
		next := min((uint64(n)+3)&^3, uint64(len(buf)))
		buf = buf[next:]
		if typ := ne.Uint16(msg[4:6]); typ != unix.NLMSG_DONE {
			continue
		}
		if len(msg) < procEventAt {
			continue
		}
		cn := msg[nlmsgHeaderLen:]
		if ne.Uint32(cn[0:4]) != cnIdxProc || ne.Uint32(cn[4:8]) != cnValProc {
			continue
		}
		data := int(ne.Uint16(cn[16:18]))
		if data > len(msg)-procEventAt {
			return fmt.Errorf("connector message says %d bytes of data, %d read", data, len(msg)-procEventAt)
		}
		ev := msg[procEventAt : procEventAt+data]
		if len(ev) < procDataAt+8 {
			continue
		}
		e := procEvent{what: ne.Uint32(ev[0:4]), ack: ne.Uint32(cn[12:16])}
		if e.what == procEventNone {
			e.ackErr = ne.Uint32(ev[procDataAt : procDataAt+4])
		} else {
			e.pid, e.tgid = ne.Uint32(ev[procDataAt:procDataAt+4]), ne.Uint32(ev[procDataAt+4:procDataAt+8])
		}
		if e.what == procEventComm && len(ev) >= procCommAt+options.CommLen+1 {
			comm := ev[procCommAt : procCommAt+options.CommLen+1]
			if i := bytes.IndexByte(comm, 0); i >= 0 {
				comm = comm[:i]
			}
			e.comm = string(comm)
		}
		each(e)
	}
	return nil
}

// procFilter is the classic BPF program the socket runs on each message
// before it is queued, so that the holder is not woken for what it does
// not use: it keeps execs, acknowledgements and the renames of a main
// thread (the thread's id is its group's), the exits of threads of the
// thread groups exits names (every exit when exits is nil), and drops
// the rest (forks, other threads renamed, other processes' threads
// exiting, user and session changes). With names, a rename is kept only
// when its new comm is one of them or its thread group is one exits
// names (a watched process, which mayRun passes whatever its name); names
// nil keeps every one, as must a filter whose exits are nil while
// processes are watched. A BPF load
// reads in network byte order, so the numbers it compares with are the
// bytes of the machine's order read as big-endian (a comm's bytes as
// they are).
func procFilter(exits []int, names []string) []unix.SockFilter {
	word := func(v uint32) uint32 {
		var b [4]byte
		binary.NativeEndian.PutUint32(b[:], v)
		return binary.BigEndian.Uint32(b[:])
	}
	const (
		ldWord = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		jeqX   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_X
		ret    = unix.BPF_RET | unix.BPF_K
		tax    = unix.BPF_MISC | unix.BPF_TAX
	)
	// Jumps go forward only, by offset: each instruction names its
	// targets by label, resolved once the labels' places are known.
	type insn struct {
		f      unix.SockFilter
		jt, jf string
	}
	const next, accept, drop, comm, exit = "", "accept", "drop", "comm", "exit"
	prog := []insn{
		{f: unix.SockFilter{Code: ldWord, K: procWhatAt}},
		{f: unix.SockFilter{Code: jeqK, K: word(procEventExec)}, jt: accept},
		{f: unix.SockFilter{Code: jeqK, K: word(procEventNone)}, jt: accept},
		{f: unix.SockFilter{Code: jeqK, K: word(procEventComm)}, jt: comm},
		{f: unix.SockFilter{Code: jeqK, K: word(procEventExit)}, jt: exit, jf: drop},
	}
	labels := map[string]int{}
	labels[comm] = len(prog)
	prog = append(prog,
		insn{f: unix.SockFilter{Code: ldWord, K: procPIDAt}},
		insn{f: unix.SockFilter{Code: tax}},
		insn{f: unix.SockFilter{Code: ldWord, K: procTGIDAt}})
	if names == nil {
		prog = append(prog, insn{f: unix.SockFilter{Code: jeqX}, jt: accept, jf: drop})
	} else {
		// The section ends with a drop and an accept of its own, so that
		// its jumps stay short whatever follows (procFilterNames).
		const commDrop, commAccept = "comm drop", "comm accept"
		prog = append(prog, insn{f: unix.SockFilter{Code: jeqX}, jf: commDrop})
		for _, tgid := range exits {
			prog = append(prog, insn{f: unix.SockFilter{Code: jeqK, K: word(uint32(tgid))}, jt: commAccept})
		}
		for i, name := range names {
			var b [options.CommLen + 1]byte
			copy(b[:options.CommLen], name)
			nextName := "name " + strconv.Itoa(i+1)
			for w := 0; w < len(b); w += 4 {
				prog = append(prog, insn{f: unix.SockFilter{Code: ldWord, K: uint32(procEventAt + procCommAt + w)}})
				if w+4 < len(b) {
					prog = append(prog, insn{f: unix.SockFilter{Code: jeqK, K: binary.BigEndian.Uint32(b[w:])}, jf: nextName})
				} else {
					prog = append(prog, insn{f: unix.SockFilter{Code: jeqK, K: binary.BigEndian.Uint32(b[w:])}, jt: commAccept})
				}
			}
			labels[nextName] = len(prog)
		}
		labels[commDrop] = len(prog)
		prog = append(prog, insn{f: unix.SockFilter{Code: ret, K: 0}})
		labels[commAccept] = len(prog)
		prog = append(prog, insn{f: unix.SockFilter{Code: ret, K: 0xffffffff}})
	}
	labels[exit] = len(prog)
	if exits == nil {
		prog = append(prog, insn{f: unix.SockFilter{Code: ret, K: 0xffffffff}})
	} else {
		prog = append(prog, insn{f: unix.SockFilter{Code: ldWord, K: procTGIDAt}})
		for _, tgid := range exits {
			prog = append(prog, insn{f: unix.SockFilter{Code: jeqK, K: word(uint32(tgid))}, jt: accept})
		}
	}
	labels[drop] = len(prog)
	prog = append(prog, insn{f: unix.SockFilter{Code: ret, K: 0}})
	labels[accept] = len(prog)
	prog = append(prog, insn{f: unix.SockFilter{Code: ret, K: 0xffffffff}})
	out := make([]unix.SockFilter, len(prog))
	for i, in := range prog {
		out[i] = in.f
		if in.jt != next {
			out[i].Jt = uint8(labels[in.jt] - i - 1)
		}
		if in.jf != next {
			out[i].Jf = uint8(labels[in.jf] - i - 1)
		}
	}
	return out
}

// maxTracked bounds the thread groups whose exits the filter keeps
// (procFilter's jumps reach at most 255 instructions): past it, every
// exit is kept.
const maxTracked = 64

// maxFilterNames bounds the short names procFilter tells renames by (8
// instructions each, which with maxTracked groups stay within a jump's
// reach): past it, every rename of a main thread is kept.
const maxFilterNames = 16

// filterNames are the short names of programs by which procFilter tells
// renames, nil (every rename) for every process or past maxFilterNames.
func filterNames(programs []options.Program) []string {
	if programs == nil {
		return nil
	}
	names := []string{}
	for _, p := range programs {
		for _, name := range p.ShortNames() {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	if len(names) > maxFilterNames {
		return nil
	}
	return names
}

// attachFilter makes procFilter(exits, names) the socket's filter, in
// place of the one before.
func attachFilter(fd int, exits []int, names []string) error {
	filter := procFilter(exits, names)
	prog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}
	if err := unix.SetsockoptSockFprog(fd, unix.SOL_SOCKET, unix.SO_ATTACH_FILTER, &prog); err != nil {
		return &seam.OSError{Call: "setsockopt(SO_ATTACH_FILTER) on the process connector", Err: err}
	}
	return nil
}

// maxGathered bounds the process ids a procEvents gathers between Takes:
// past it, it says Lost and the hold reads every process.
const maxGathered = 4096

// procEvents reads the process-events connector on a goroutine of its
// own and gathers what a hold needs of it (seam.ProgramEvents).
//
// An exec or a rename is gathered only when the process may run one of
// the programs (mayRun): what every other program started on the machine
// announces is read by this reader and goes no further, so that the hold,
// which runs on a locked thread whose every wake-up costs the runtime a
// hand-off between threads, is woken only for what it may have to look at
// (BENCHMARKS.md measures it against a scan every second). The socket's filter cannot tell that itself: an
// exec's event carries no name.
//
// The socket is not given to Go's poller: it registers a descriptor
// edge-triggered for good, and wakes its poller thread for every message
// that arrives, whether a goroutine reads or not, which is a wake-up of
// the runtime for every exec on the machine. The reader waits in poll(2)
// itself, on the socket and on wakeClose, an eventfd Close writes to.
type procEvents struct {
	// fd is the socket, -1 once Close closed it (readMu held).
	fd, wakeClose int
	// programs are the programs watched, nil for every process; names
	// their short names the socket's filter tells renames by (filterNames).
	programs []options.Program
	names    []string
	// readMu serialises the reads of the socket (drain), into buf.
	readMu sync.Mutex
	buf    []byte
	// recv reads one message of the socket without waiting; nil is
	// recvfrom(2) (a test's source in its place).
	recv func(fd int, buf []byte) (int, error)
	// ready says something was gathered, wake asks the reader to wait
	// for the socket; stop is closed by Close, done once the reader has
	// ended.
	ready, wake chan struct{}
	stop, done  chan struct{}

	mu      sync.Mutex
	ran     map[int]bool
	exited  map[int]bool
	lost    bool
	err     error
	closing bool
	// tracked are the pids of the last Track (Track's goroutine only),
	// watched a copy the reader reads (mu held).
	tracked map[int]bool
	watched map[int]bool
	// comm is the buffer mayRun reads a comm into (readMu held).
	comm []byte
}

// openProcEvents opens a netlink connector socket, filters it
// (procFilter), joins the process events' group and asks the kernel to
// send them (PROC_CN_MCAST_LISTEN), then waits up to wait for the
// kernel's acknowledgement: before Linux 6.6 a process without
// CAP_NET_ADMIN is refused with EPERM (since, any user may listen), and
// one outside the initial user and pid namespaces (a container) gets no
// answer at all. Execs and renames are gathered for the processes that
// may run one of programs (mayRun), for every process when programs is
// nil.
func openProcEvents(programs []string, wait time.Duration) (*procEvents, error) {
	var watch []options.Program
	if programs != nil {
		watch = make([]options.Program, 0, len(programs))
		for _, program := range programs {
			watch = append(watch, options.NewProgram(program, false, filepath.EvalSymlinks))
		}
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_CONNECTOR)
	if err != nil {
		return nil, &seam.OSError{Call: "socket(AF_NETLINK, NETLINK_CONNECTOR)", Err: err}
	}
	// Nothing is watched yet: the renames kept are those to the programs'
	// names.
	if err := attachFilter(fd, nil, filterNames(watch)); err != nil {
		unix.Close(fd)
		return nil, err
	}
	// A larger buffer makes an overrun (ENOBUFS) rarer; the kernel's limit
	// is kept where it is lower, and root may pass it.
	const rcvbuf = 1 << 20
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, rcvbuf) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, rcvbuf)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: cnIdxProc}); err != nil {
		unix.Close(fd)
		return nil, &seam.OSError{Call: "bind the process connector's group", Err: err}
	}
	// The kernel numbers what it sends itself, but answers a request's
	// ack number plus one, to every listener: ours is told by it.
	ack := uint32(os.Getpid())<<8 | uint32(time.Now().UnixNano()&0xff)
	if _, err := unix.Write(fd, listenMessage(ack)); err != nil {
		unix.Close(fd)
		return nil, &seam.OSError{Call: "send PROC_CN_MCAST_LISTEN", Err: err}
	}
	if err := awaitAck(fd, ack, wait); err != nil {
		unix.Close(fd)
		return nil, err
	}
	wakeClose, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		return nil, &seam.OSError{Call: "eventfd", Err: err}
	}
	pe := newProcEvents(fd, wakeClose, watch)
	pe.askWake()
	go pe.read()
	return pe, nil
}

// newProcEvents is a procEvents reading fd, which Close closes with
// wakeClose, for programs (nil for every process); its reader is not
// started.
func newProcEvents(fd, wakeClose int, programs []options.Program) *procEvents {
	return &procEvents{fd: fd, wakeClose: wakeClose, buf: make([]byte, 64<<10), ready: make(chan struct{}, 1), wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		ran: map[int]bool{}, exited: map[int]bool{}, watched: map[int]bool{}, comm: make([]byte, 64),
		programs: programs, names: filterNames(programs)}
}

// listenMessage is the request PROC_CN_MCAST_LISTEN: a netlink header,
// a connector header naming the process connector and carrying ack,
// and the operation.
func listenMessage(ack uint32) []byte {
	ne := binary.NativeEndian
	b := make([]byte, procEventAt+4)
	ne.PutUint32(b[0:4], uint32(len(b)))
	ne.PutUint16(b[4:6], unix.NLMSG_DONE)
	ne.PutUint32(b[12:16], uint32(os.Getpid()))
	cn := b[nlmsgHeaderLen:]
	ne.PutUint32(cn[0:4], cnIdxProc)
	ne.PutUint32(cn[4:8], cnValProc)
	ne.PutUint32(cn[12:16], ack)
	ne.PutUint16(cn[16:18], 4)
	ne.PutUint32(b[procEventAt:], procCnMcastListen)
	return b
}

// errNoAnswer is the kernel not answering PROC_CN_MCAST_LISTEN, as
// outside the initial user and pid namespaces.
var errNoAnswer = errors.New("no answer from the process connector (a container's own namespaces?)")

// awaitAck reads until the kernel's acknowledgement of the request
// whose ack number is ack (sent to every listener: it is the one that
// answers ack+1), skipping the events and other listeners'
// acknowledgements that come before it.
func awaitAck(fd int, ack uint32, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	buf := make([]byte, 8192)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return errNoAnswer
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, int(left.Milliseconds())+1); err != nil && err != unix.EINTR {
			return &seam.OSError{Call: "poll the process connector", Err: err}
		}
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
		switch {
		case err == unix.EAGAIN, err == unix.EINTR, err == unix.ENOBUFS:
			continue
		case err != nil:
			return &seam.OSError{Call: "read the process connector", Err: err}
		}
		var ackErr uint32
		found := false
		if err := decodeProcEvents(buf[:n], func(e procEvent) {
			if e.what == procEventNone && e.ack == ack+1 {
				found, ackErr = true, e.ackErr
			}
		}); err != nil {
			return &seam.OSError{Call: "read the process connector", Err: err}
		}
		if !found {
			continue
		}
		if ackErr != 0 {
			return &seam.OSError{Call: "PROC_CN_MCAST_LISTEN", Err: unix.Errno(ackErr)}
		}
		return nil
	}
}

// read waits for a message while the hold wants to be told (wake), at
// its pace (readPace), reads what the socket holds, up to a bound
// (drain), and
// says so on Ready when it gathered something; then it
// waits for the next Take with wake before it waits for the socket
// again. A hold that takes on its own (Take without wake: a steady
// stream of announcements, taken at its own pace) is not woken, nor is
// this reader: what comes waits in the socket's buffer (an overrun says
// Lost), and Take reads it first.
func (pe *procEvents) read() {
	defer close(pe.done)
	pace := newReadPace(readEvery, readBurst, time.Now())
	for {
		// A Close that came while the reader drained is seen first, even
		// when a Take asked it to wait for the socket meanwhile.
		select {
		case <-pe.stop:
			return
		default:
		}
		select {
		case <-pe.wake:
		case <-pe.stop:
			return
		}
		if wait := pace.wait(time.Now()); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-pe.stop:
				t.Stop()
				return
			}
		}
		closed, err := pe.await()
		if closed {
			return
		}
		pace.spend(time.Now())
		if err != nil {
			pe.mu.Lock()
			closing := pe.closing
			pe.mu.Unlock()
			if !closing {
				pe.gather(func() { pe.err = &seam.OSError{Call: "read the process connector", Err: err} })
			}
			return
		}
		pe.mu.Lock()
		some := pe.pending()
		pe.mu.Unlock()
		if !some {
			// Taken meanwhile: wait for the socket again.
			pe.askWake()
			continue
		}
		pe.signal()
	}
}

// The reader's pace (readPace): while messages keep coming it is woken
// for them readBurst times at once, then once every readEvery, and what
// came between is read in one go; the socket's buffer holds it meanwhile
// (an overrun says Lost). Each wake-up of a Go program costs its runtime
// a round of its threads (the poller, sysmon, a spinning thread): a
// reader woken for every exec on a busy machine cost more than a scan of
// /proc every second.
const (
	readEvery = time.Second
	readBurst = 4
)

// readPace is a token bucket of reads: burst reads at once, then one
// every every.
type readPace struct {
	every  time.Duration
	burst  int
	credit time.Duration
	last   time.Time
}

func newReadPace(every time.Duration, burst int, now time.Time) readPace {
	return readPace{every: every, burst: burst, credit: time.Duration(burst) * every, last: now}
}

// refill adds the time since the last refill to the credit, up to
// burst reads.
func (p *readPace) refill(now time.Time) {
	if d := now.Sub(p.last); d > 0 {
		p.credit = min(p.credit+d, time.Duration(p.burst)*p.every)
	}
	p.last = now
}

// wait is how long after now the next read may be made.
func (p *readPace) wait(now time.Time) time.Duration {
	p.refill(now)
	return max(p.every-p.credit, 0)
}

// spend counts a read made at now.
func (p *readPace) spend(now time.Time) {
	p.refill(now)
	p.credit = max(p.credit-p.every, 0)
}

// await reads what the socket holds, waiting in poll(2) until it holds
// something; closed says Close woke it.
func (pe *procEvents) await() (closed bool, err error) {
	for {
		some, err := pe.drain()
		if err != nil || some {
			return false, err
		}
		pe.readMu.Lock()
		fd := pe.fd
		pe.readMu.Unlock()
		if fd < 0 {
			return true, nil
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(pe.wakeClose), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return false, err
		}
		if fds[1].Revents != 0 {
			return true, nil
		}
	}
}

// askWake has the reader wait for the socket.
func (pe *procEvents) askWake() {
	select {
	case pe.wake <- struct{}{}:
	default:
	}
}

// maxDrainReads bounds the reads of one drain: more than the messages a
// full receive buffer holds (1 MiB asked, which the kernel counts twice,
// held about 2,500 renames), so that a drain still empties a buffer that
// filled between two reads. Without a bound, processes that rename
// their main thread in a loop (any user may, and the socket's filter
// keeps renames) would keep the socket from running dry: the drain would
// never end, and Take, Track and Close, which wait for it (readMu, the
// reader's end), with it.
const maxDrainReads = 4096

// recvNow reads one message of fd without waiting.
func recvNow(fd int, buf []byte) (int, error) {
	n, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT)
	return n, err
}

// drain reads the messages the socket holds now, without waiting, up
// to maxDrainReads reads, and gathers what they say; some reports
// whether any was read (true at the bound: the rest waits for the next
// drain, at the reader's pace, or Take's). It is called by the reader
// and by Take, one at a time (readMu).
func (pe *procEvents) drain() (some bool, err error) {
	pe.readMu.Lock()
	defer pe.readMu.Unlock()
	recv := pe.recv
	if recv == nil {
		recv = recvNow
	}
	for reads := 0; pe.fd >= 0; reads++ {
		if reads == maxDrainReads {
			return true, nil
		}
		n, err := recv(pe.fd, pe.buf)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			return some, nil
		case err == unix.ENOBUFS:
			pe.mu.Lock()
			pe.lost = true
			pe.mu.Unlock()
			some = true
			continue
		case err != nil:
			return some, err
		case n == 0:
			return some, errors.New("end of file")
		}
		some = true
		pe.decode(pe.buf[:n])
	}
	return some, nil
}

// decode gathers what one message holds (readMu held).
func (pe *procEvents) decode(msg []byte) {
	err := decodeProcEvents(msg, func(e procEvent) {
		switch e.what {
		case procEventExec, procEventComm:
			if pe.mayRun(e) {
				pe.note(pe.ran, e.tgid)
			}
		case procEventExit:
			pe.note(pe.exited, e.tgid)
		}
	})
	if err != nil {
		// The rest of this read cannot be found: anything may be lost.
		pe.mu.Lock()
		pe.lost = true
		pe.mu.Unlock()
	}
}

// mayRun reports whether the process an exec or a rename announced may
// run one of the programs, as a scan would tell it first: a watched
// process (tracked: an exec may end its match, whatever its name is
// now), or one whose comm (a rename's, carried by its event; an exec's,
// read from /proc/PID/comm, which the kernel set before it announced
// the exec) is a program's short name (options.Program's
// ShortNameMatches, by which a scan matches or passes a process). A
// process that has gone meanwhile may not; one whose comm cannot be read
// otherwise (out of descriptors) may, and the scan says why it cannot
// look. A later rename or exec is announced on its own, and read then.
// readMu held.
func (pe *procEvents) mayRun(e procEvent) bool {
	if pe.programs == nil {
		return true
	}
	pe.mu.Lock()
	watched := pe.watched[int(e.tgid)]
	pe.mu.Unlock()
	if watched {
		return true
	}
	comm := e.comm
	if e.what == procEventExec {
		read, gone := pe.readComm(int(e.tgid))
		if gone {
			return false
		}
		if read == nil {
			return true
		}
		comm = string(read)
	}
	for _, p := range pe.programs {
		if p.ShortNameMatches(comm) {
			return true
		}
	}
	return false
}

// readComm reads the comm of the process tgid, with its newline cut:
// gone when it has exited (or never was one), nil when it could not be
// read for another reason (readMu held).
func (pe *procEvents) readComm(tgid int) (comm []byte, gone bool) {
	if tgid <= 0 {
		return nil, true
	}
	fd, err := unix.Open("/proc/"+strconv.Itoa(tgid)+"/comm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err == unix.ENOENT || err == unix.ESRCH
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, pe.comm)
	if err != nil {
		return nil, err == unix.ESRCH
	}
	return bytes.TrimSuffix(pe.comm[:n], []byte("\n")), false
}

// pending reports whether something was gathered and not taken (pe.mu
// held).
func (pe *procEvents) pending() bool {
	return len(pe.ran) > 0 || len(pe.exited) > 0 || pe.lost || pe.err != nil
}

// note gathers a process id; past maxGathered, it says Lost instead.
func (pe *procEvents) note(set map[int]bool, tgid uint32) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	if tgid == 0 {
		return
	}
	if len(pe.ran)+len(pe.exited) >= maxGathered {
		pe.lost = true
		return
	}
	set[int(tgid)] = true
}

// gather changes what is gathered and says it is ready.
func (pe *procEvents) gather(change func()) {
	pe.mu.Lock()
	change()
	pe.mu.Unlock()
	pe.signal()
}

func (pe *procEvents) signal() {
	pe.mu.Lock()
	some := pe.pending()
	pe.mu.Unlock()
	if some {
		select {
		case pe.ready <- struct{}{}:
		default:
		}
	}
}

func (pe *procEvents) Ready() <-chan struct{} { return pe.ready }

// Take reads what the socket holds, up to a bound (drain), then returns what was gathered
// since the last Take, and forgets it; with wake, the reader then waits
// for the socket.
func (pe *procEvents) Take(wake bool) seam.ProcessChanges {
	if wake {
		defer pe.askWake()
	}
	if _, failed := pe.drain(); failed != nil {
		pe.mu.Lock()
		if !pe.closing {
			pe.err = &seam.OSError{Call: "read the process connector", Err: failed}
		}
		pe.mu.Unlock()
	}
	pe.mu.Lock()
	defer pe.mu.Unlock()
	c := seam.ProcessChanges{Lost: pe.lost, Err: pe.err}
	for pid := range pe.ran {
		c.Ran = append(c.Ran, pid)
	}
	for pid := range pe.exited {
		c.Exited = append(c.Exited, pid)
	}
	clear(pe.ran)
	clear(pe.exited)
	pe.lost = false
	return c
}

// Track keeps only the exits of the threads of pids (seam.ProgramEvents),
// by the socket's filter; past maxTracked, every exit. Their execs and
// renames are gathered whatever their names (mayRun), and the filter
// keeps their renames as well (past maxTracked, every rename).
func (pe *procEvents) Track(pids []int) {
	watched := make(map[int]bool, len(pids))
	for _, pid := range pids {
		watched[pid] = true
	}
	pe.mu.Lock()
	pe.watched = watched
	pe.mu.Unlock()
	names := pe.names
	switch {
	case len(pids) > maxTracked:
		// Every exit, and every rename: the filter cannot tell the
		// watched processes' apart.
		pids, names = nil, nil
	case pids == nil:
		pids = []int{}
	}
	pe.readMu.Lock()
	err := os.ErrClosed
	if pe.fd >= 0 {
		err = attachFilter(pe.fd, pids, names)
	}
	pe.readMu.Unlock()
	if err != nil {
		// The filter before stays, which may drop the exits of a process
		// that now runs a program: the source has failed, and the hold
		// scans without it.
		pe.gather(func() { pe.err = err })
		return
	}
	// A process newly tracked may have exited after the scan that found
	// it and before its filter: the filter before dropped that exit. Each
	// is announced as exited once, so that the hold looks whether it
	// still runs instead of holding for it until its next look.
	var added []int
	for _, pid := range pids {
		if !pe.tracked[pid] {
			added = append(added, pid)
		}
	}
	pe.tracked = make(map[int]bool, len(pids))
	for _, pid := range pids {
		pe.tracked[pid] = true
	}
	if len(added) > 0 {
		pe.gather(func() {
			for _, pid := range added {
				pe.exited[pid] = true
			}
		})
	}
}

// Close closes the socket (the kernel stops sending to it) and waits for
// the reader to end.
func (pe *procEvents) Close() {
	pe.mu.Lock()
	if pe.closing {
		pe.mu.Unlock()
		return
	}
	pe.closing = true
	pe.mu.Unlock()
	close(pe.stop)
	one := make([]byte, 8)
	binary.NativeEndian.PutUint64(one, 1)
	_, _ = unix.Write(pe.wakeClose, one)
	<-pe.done
	pe.readMu.Lock()
	unix.Close(pe.fd)
	pe.fd = -1
	pe.readMu.Unlock()
	unix.Close(pe.wakeClose)
}

// ListensToProgramEvents reports whether the process pid holds a process
// connector socket that joined the process events' group: the sockets
// /proc/net/netlink lists (this network namespace's) against the
// process's descriptors, which only its user and root may read.
func (system) ListensToProgramEvents(pid int) (bool, error) {
	data, err := os.ReadFile("/proc/net/netlink")
	if err != nil {
		return false, &seam.OSError{Call: "read /proc/net/netlink", Err: err}
	}
	sockets := connectorSockets(data)
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false, &seam.OSError{Call: "read " + dir, Err: err}
	}
	if len(sockets) == 0 {
		return false, nil
	}
	for _, fd := range fds {
		link, err := os.Readlink(dir + "/" + fd.Name())
		if err != nil {
			continue // closed meanwhile
		}
		inode, ok := strings.CutPrefix(link, "socket:[")
		if !ok {
			continue
		}
		if n, err := strconv.ParseUint(strings.TrimSuffix(inode, "]"), 10, 64); err == nil && sockets[n] {
			return true, nil
		}
	}
	return false, nil
}

// connectorSockets reads /proc/net/netlink (a header line, then per
// socket: sk, Eth, Pid, Groups, Rmem, Wmem, Dump, Locks, Drops, Inode)
// into the inodes of the process connector's sockets (Eth 11,
// NETLINK_CONNECTOR) that joined the process events' group (the bit of
// CN_IDX_PROC in Groups, the first 32 groups in hexadecimal). A line it
// cannot read is skipped.
func connectorSockets(data []byte) map[uint64]bool {
	out := map[uint64]bool{}
	for i, line := range bytes.Split(data, []byte("\n")) {
		f := bytes.Fields(line)
		if i == 0 || len(f) < 10 {
			continue
		}
		if eth, err := strconv.Atoi(string(f[1])); err != nil || eth != unix.NETLINK_CONNECTOR {
			continue
		}
		groups, err := strconv.ParseUint(string(f[3]), 16, 32)
		if err != nil || groups&cnIdxProc == 0 {
			continue
		}
		if inode, err := strconv.ParseUint(string(f[9]), 10, 64); err == nil && inode != 0 {
			out[inode] = true
		}
	}
	return out
}
