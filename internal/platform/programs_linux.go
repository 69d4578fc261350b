package platform

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/seam"
)

// ScanPrograms scans /proc (procScanner).
func (system) ScanPrograms(programs []string) (seam.ProgramScanner, error) {
	return newProcScanner("/proc", programs)
}

// A procScanner finds the processes of named programs in /proc, reading
// as little as a scan every second allows (BENCHMARKS.md measures it):
//   - /proc/loadavg's last process id, read first with pread on a
//     descriptor kept open, changes whenever any process or thread is
//     created: while it stays (at this scan and the one before), no
//     process is new, and /proc is not listed;
//     otherwise, and every fullScanEvery scans whatever it says, the
//     process ids come from one getdents pass over /proc, on a directory
//     descriptor kept open;
//   - a process seen for the first time has its stat read once: a kernel
//     thread (PF_KTHREAD) runs no program and is not read again;
//   - a user process's comm (/proc/PID/comm) is read with pread on a
//     descriptor kept open: comm changes when the process executes another
//     program, keeping its id, and a descriptor kept open names the
//     process, not the number, so a read of one that has exited fails with
//     ESRCH even when its id was taken again. It is read at every scan for
//     a process of a watched program (to see it exit) and for one first
//     seen fewer than youngScans scans ago (a launcher forks, then
//     executes the game within moments); any other process's, once every
//     rotateScans scans, by its id: a shell that has run for a while and
//     then executes the game is seen within rotateScans seconds, not one;
//   - only a process whose comm is a watched program's has its executable
//     (/proc/PID/exe) and its stat read, for a name longer than comm
//     holds, a program named by its path (whose file, device and inode,
//     must be the path's: sameFile), its state (a zombie with no other
//     thread has exited: a main thread that ended with pthread_exit is a
//     zombie while the program's other threads run) and its start time;
//     its status (its real user id) is read when it matches and at every
//     scan while it does: a launcher started by root may drop to a user's
//     id;
//   - a process once matched stays matched until it has gone (its comm
//     descriptor's read fails, or its stat cannot be read, shows a zombie
//     or another start time: its id was taken again), whatever its comm
//     says: programs rename their main thread (prctl(PR_SET_NAME); Wine
//     for SetThreadDescription, many game engines), which changes comm.
//     When comm changes, its executable is read again: only an exec into
//     another executable ends the match (then comm is compared afresh).
//
// Reading every user process's comm at every scan costs this machine's
// holder twice the CPU (BENCHMARKS.md). The comm descriptors kept open are
// bounded by the descriptor limit (keptLimit); past the bound a comm is
// opened and closed at each read. A read that fails for want of
// descriptors or memory (EMFILE, ENFILE, ENOMEM) fails the scan, which the
// hold says: it is not read as the process having gone.
//
// The netlink process connector (procevents_linux.go) announces every
// exec and exit, where the kernel offers it (the initial user and pid
// namespaces; CAP_NET_ADMIN before Linux 6.6), but drops events when its
// socket buffer fills and says nothing a holder could trust of another
// user's process: a hold uses it only to choose when to scan, and what
// to read (Hint); the scan decides. fanotify and eBPF need root
// and more.
type procScanner struct {
	root     string
	programs []options.Program
	// files are, for each program named by its path, the file the path
	// names (fileID.path "" for a bare name): a process runs the program
	// when its executable is that file, not a file shown at that path
	// (sameFile).
	files   []fileID
	dir     int
	buf     []byte
	entries map[int]*procEntry
	scan    uint64
	// kept counts the comm descriptors kept open, at most maxKept
	// (keptLimit): past it a process's comm is opened and closed at each
	// scan.
	kept, maxKept int
	// boot is when the machine booted, read once so that a process's
	// start time is the same at every scan.
	boot time.Time
	// loadavg is a descriptor on /proc/loadavg (-1 when it could not be
	// opened), lastPID its last process id at the last listing of /proc,
	// and lastFull the scan that listed it.
	loadavg  int
	lastPID  []byte
	lastFull uint64
	// createdBefore is set when the scan before saw the last process id
	// change.
	createdBefore bool
	// reread are the processes the next scan reads afresh, rereadAll
	// makes it read every process so, and only makes it read nothing but
	// reread and the matches (Hint).
	reread          map[int]bool
	rereadAll, only bool
	// unreadable are the processes this scan could not tell (Unreadable).
	unreadable []seam.UnreadableProcess
	// readFile, statPath and readDir read /proc for a scan (readProcFile,
	// unix.Stat, os.ReadDir): tests replace them to make them fail as a
	// machine out of descriptors or memory does.
	readFile func(path string, buf []byte) (int, error)
	statPath func(path string, st *unix.Stat_t) error
	readDir  func(path string) ([]os.DirEntry, error)
}

// readProcFile reads the start of the file at path into buf.
func readProcFile(path string, buf []byte) (int, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	return unix.Read(fd, buf)
}

// How often a scanner reads what (procScanner), in scans.
const (
	fullScanEvery = 10
	youngScans    = 5
	rotateScans   = 10
)

// maxKeptComm bounds the descriptors a scanner keeps open, whatever the
// limit (keptLimit).
const maxKeptComm = 2048

// keptLimit is how many comm descriptors a scanner keeps open under a
// descriptor limit (RLIMIT_NOFILE's soft limit, which Go raises to the
// hard limit at start-up): a quarter of it, at most maxKeptComm, so that
// the rest of the holder (its setting, its log, a --listen server's
// connections) and the scan's own opens have the other three quarters.
// Under `ulimit -n 64` it keeps 16.
func keptLimit(soft uint64) int {
	return int(min(soft/4, maxKeptComm))
}

// outOfResources reports whether err says this process, or the machine,
// ran out of descriptors or memory: a scan that meets it has failed, and
// tells nothing of the process it was reading (a scan error is not an
// exit).
func outOfResources(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE) || errors.Is(err, unix.ENOMEM)
}

// scanFailed is the error of a scan that could not read a process's
// files (comm, stat, status, exe, task) for want of resources: the same
// words whichever process and file it was, and however many descriptors
// the scanner keeps at the time, so that a hold, which says a scan's
// failure again only when its words change, says it once.
func (sc *procScanner) scanFailed(err error) error {
	return &seam.OSError{Call: fmt.Sprintf("read %s/PID files (at most %d descriptors kept open)", sc.root, sc.maxKept), Err: err}
}

// clockTicksPerSecond is USER_HZ, the unit of /proc/PID/stat's start time:
// 100 on every architecture Linux supports (sysconf(_SC_CLK_TCK)).
const clockTicksPerSecond = 100

// procEntry is what a scanner keeps of a process it has seen.
type procEntry struct {
	// comm is a descriptor on /proc/PID/comm, -1 when not kept.
	comm int
	// kernel is set for a kernel thread, whose comm is not read again.
	kernel bool
	// seen is the last scan that saw it, first the first.
	seen, first uint64
	// match is the index of the watched program it runs, -1 for none;
	// for a match, matchComm is the comm it had when last checked, exe
	// its executable ("" when it could not be read: another user's),
	// file, for a program named by its path, the executable's device and
	// inode when it matched (the path may name another file since: an
	// update), and started its start time.
	match     int
	matchComm string
	exe       string
	file      fileID
	started   time.Time
	uid       int
	// unreadable is set once a scan could not read its executable to tell
	// whether it runs a program its comm names (Unreadable).
	unreadable bool
}

func newProcScanner(root string, programs []string) (*procScanner, error) {
	dir, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &seam.OSError{Call: "open " + root, Err: err}
	}
	sc := &procScanner{root: root, dir: dir, buf: make([]byte, 32<<10), entries: map[int]*procEntry{}, boot: bootTime(), maxKept: maxKeptComm,
		readFile: readProcFile, statPath: unix.Stat, readDir: os.ReadDir}
	var limit unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &limit) == nil {
		sc.maxKept = keptLimit(limit.Cur)
	}
	if sc.loadavg, err = unix.Open(root+"/loadavg", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		sc.loadavg = -1
	}
	for _, program := range programs {
		sc.programs = append(sc.programs, options.NewProgram(program, false, filepath.EvalSymlinks))
		f := fileID{}
		if options.ProgramBase(program, false) != program {
			f.path = program
			// A path that cannot be read now is read again at the first
			// process that may run it.
			f.dev, f.ino, f.ok, _ = sc.statID(program)
		}
		sc.files = append(sc.files, f)
	}
	return sc, nil
}

// fileID is a file as the kernel tells it (device and inode), whatever
// path shows it.
type fileID struct {
	// path is the program's path, "" for a program named by its name.
	path     string
	dev, ino uint64
	// ok is false while the path could not be read (nothing there yet).
	ok bool
}

// statID reads the device and inode of the file path names, links
// followed: for /proc/PID/exe, the executable the process runs, whatever
// mount shows it at which path. ok is false when there is none; err is a
// stat that failed for want of resources (outOfResources), which tells
// nothing of the file.
func (sc *procScanner) statID(path string) (dev, ino uint64, ok bool, err error) {
	var st unix.Stat_t
	if err := sc.statPath(path, &st); err != nil {
		if outOfResources(err) {
			return 0, 0, false, err
		}
		return 0, 0, false, nil
	}
	return st.Dev, st.Ino, true, nil
}

// Scan lists the running processes of the watched programs.
func (sc *procScanner) Scan() ([]seam.ProgramProcess, error) {
	if sc.dir < 0 {
		return nil, errors.New("scan after Close")
	}
	sc.scan++
	sc.unreadable = nil
	// A process id is allocated a moment before the process shows in
	// /proc: /proc is listed again at the scan after a change too.
	reread, all, only := sc.reread, sc.rereadAll, sc.only && !sc.rereadAll
	sc.reread, sc.rereadAll, sc.only = nil, false, false
	full := all || sc.lastFull == 0
	if !only {
		created := sc.processCreated()
		full = full || created || sc.createdBefore || sc.scan-sc.lastFull >= fullScanEvery
		sc.createdBefore = created
	}
	var pids []int
	if full {
		var err error
		if pids, err = sc.readPIDs(); err != nil {
			return nil, err
		}
		sc.lastFull = sc.scan
	} else {
		pids = make([]int, 0, len(sc.entries)+len(reread))
		for pid, e := range sc.entries {
			if !only || e.match >= 0 || reread[pid] {
				pids = append(pids, pid)
			}
		}
		for pid := range reread {
			if sc.entries[pid] == nil {
				pids = append(pids, pid)
			}
		}
	}
	var out []seam.ProgramProcess
	name := make([]byte, 64)
	for _, pid := range pids {
		if kept := sc.entries[pid]; kept != nil && (all || reread[pid]) {
			sc.forget(pid, kept)
		} else if kept != nil && kept.match < 0 && sc.scan-kept.first >= youngScans && uint64(pid)%rotateScans != sc.scan%rotateScans {
			kept.seen = sc.scan
			continue
		}
		comm, ok, err := sc.readComm(pid, name)
		if err != nil {
			return nil, err
		}
		e := sc.entries[pid]
		if !ok {
			if e != nil {
				e.match = -1
			}
			continue
		}
		if e.match >= 0 {
			runs, err := sc.stillRuns(pid, e, comm)
			if err != nil {
				return nil, err
			}
			if runs {
				out = append(out, seam.ProgramProcess{PID: pid, Program: e.match, Started: e.started, UID: e.uid})
				continue
			}
			e.match = -1
		}
		for i, p := range sc.programs {
			if !p.ShortNameMatches(string(comm)) {
				continue
			}
			m, running, err, failed := sc.matches(pid, i)
			if failed != nil {
				return nil, failed
			}
			if running {
				uid, err := sc.uid(pid)
				if err != nil {
					return nil, err
				}
				out = append(out, seam.ProgramProcess{PID: pid, Program: i, Started: m.started, UID: uid})
				e.match, e.matchComm, e.exe, e.file, e.started, e.uid = i, string(comm), m.exe, m.file, m.started, uid
				break
			}
			if err != nil && !e.unreadable {
				e.unreadable = true
				sc.unreadable = append(sc.unreadable, seam.UnreadableProcess{PID: pid, Program: i, Err: err})
			}
		}
	}
	if full {
		for pid, e := range sc.entries {
			if e.seen != sc.scan {
				if e.comm >= 0 {
					unix.Close(e.comm)
					sc.kept--
				}
				delete(sc.entries, pid)
			}
		}
	}
	return out, nil
}

// Hint tells the next Scan what an event source announced
// (seam.ProgramScanner): h.PIDs are read afresh (a process that executed
// another program keeps its id, and is otherwise read again only every
// rotateScans scans), every process with h.All; with h.Only the scan
// neither lists /proc nor reads any process but those and its matches.
// What was announced only chooses what is read: the scan decides, by
// the rules above, what runs.
func (sc *procScanner) Hint(h seam.ScanHint) {
	sc.rereadAll, sc.only = h.All, h.Only
	sc.reread = make(map[int]bool, len(h.PIDs))
	for _, pid := range h.PIDs {
		// At most what /proc can show: a hostile count is not kept.
		if pid > 0 && pid <= 1<<22 && len(sc.reread) < 1<<16 {
			sc.reread[pid] = true
		}
	}
}

// forget makes the scan read the process pid afresh (Hint): a kernel
// thread's entry is dropped (a kernel thread that executes a program,
// as the kernel's usermode helpers do, is one no longer), and a match's
// comm is no longer trusted, so that its executable is compared again
// (stillRuns): an exec into another executable of the same name ends
// the match.
func (sc *procScanner) forget(pid int, e *procEntry) {
	if e.kernel {
		delete(sc.entries, pid)
		return
	}
	e.first = sc.scan
	if e.match >= 0 {
		e.matchComm = ""
	}
}

// processCreated reports whether a process or thread may have been
// created since /proc was last listed: /proc/loadavg's last field, the
// last process id allocated, changed (or cannot be read).
func (sc *procScanner) processCreated() bool {
	if sc.loadavg < 0 {
		return true
	}
	buf := make([]byte, 128)
	n, err := unix.Pread(sc.loadavg, buf, 0)
	if err != nil || n == 0 {
		return true
	}
	fields := bytes.Fields(buf[:n])
	if len(fields) != 5 {
		return true
	}
	last := fields[4]
	if bytes.Equal(last, sc.lastPID) {
		return false
	}
	sc.lastPID = append(sc.lastPID[:0], last...)
	return true
}

// readPIDs lists the process ids in /proc: the directories whose names
// are decimal numbers.
func (sc *procScanner) readPIDs() ([]int, error) {
	if _, err := unix.Seek(sc.dir, 0, 0); err != nil {
		return nil, &seam.OSError{Call: "rewind " + sc.root, Err: err}
	}
	pids := make([]int, 0, len(sc.entries)+16)
	for {
		n, err := unix.Getdents(sc.dir, sc.buf)
		if err != nil {
			return nil, &seam.OSError{Call: "read " + sc.root, Err: err}
		}
		if n == 0 {
			return pids, nil
		}
		pids = appendDirentPIDs(pids, sc.buf[:n])
	}
}

// appendDirentPIDs appends the process ids among getdents64's records
// (unix.ParseDirent reads them in the machine's byte order): the names
// that are decimal numbers. In /proc only a process's directory has one.
func appendDirentPIDs(pids []int, buf []byte) []int {
	_, _, names := unix.ParseDirent(buf, -1, nil)
	for _, name := range names {
		if pid, ok := parsePID([]byte(name)); ok {
			pids = append(pids, pid)
		}
	}
	return pids
}

// parsePID reads a process id: decimal digits, no sign, no leading zero.
func parsePID(name []byte) (int, bool) {
	if len(name) == 0 || len(name) > 10 || name[0] == '0' {
		return 0, false
	}
	pid := 0
	for _, c := range name {
		if c < '0' || c > '9' {
			return 0, false
		}
		pid = pid*10 + int(c-'0')
	}
	return pid, pid > 0 && pid <= 1<<22
}

// readComm reads the comm of pid into buf, with the newline cut; ok is
// false for a process that has exited (or a kernel thread, not read
// again). err is a scan that failed (outOfResources), which says nothing
// of the process.
func (sc *procScanner) readComm(pid int, buf []byte) (comm []byte, ok bool, err error) {
	e := sc.entries[pid]
	if e != nil {
		e.seen = sc.scan
		if e.kernel {
			return nil, false, nil
		}
		if e.comm >= 0 {
			if n, err := unix.Pread(e.comm, buf, 0); err == nil && n > 0 {
				return bytes.TrimSuffix(buf[:n], []byte("\n")), true, nil
			}
			// ESRCH: the process the descriptor names has gone, and its
			// id is another's now (or the read failed): start again.
			unix.Close(e.comm)
			sc.kept--
			e.comm, e.match, e.first, e.unreadable = -1, -1, sc.scan, false
			kernel, ok, err := sc.kernelThread(pid)
			if err != nil || !ok || kernel {
				e.kernel = kernel
				return nil, false, err
			}
		}
	} else {
		kernel, ok, err := sc.kernelThread(pid)
		if err != nil || !ok {
			return nil, false, err
		}
		e = &procEntry{comm: -1, match: -1, kernel: kernel, seen: sc.scan, first: sc.scan}
		sc.entries[pid] = e
		if kernel {
			return nil, false, nil
		}
	}
	fd, err := unix.Open(sc.root+"/"+strconv.Itoa(pid)+"/comm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		if outOfResources(err) {
			return nil, false, sc.scanFailed(err)
		}
		return nil, false, nil
	}
	n, err := unix.Read(fd, buf)
	if sc.kept < sc.maxKept && err == nil {
		e.comm = fd
		sc.kept++
	} else {
		unix.Close(fd)
	}
	if err != nil || n == 0 {
		return nil, false, nil
	}
	return bytes.TrimSuffix(buf[:n], []byte("\n")), true, nil
}

// kernelThread reads whether pid is a kernel thread; ok is false when its
// stat cannot be read (it has exited), err a scan that failed.
func (sc *procScanner) kernelThread(pid int) (kernel, ok bool, err error) {
	st, err := sc.stat(pid)
	if err != nil {
		if outOfResources(err) {
			return false, false, sc.scanFailed(err)
		}
		return false, false, nil
	}
	return st.flags&pfKthread != 0, true, nil
}

// pfKthread is PF_KTHREAD in /proc/PID/stat's flags (include/linux/sched.h).
const pfKthread = 0x00200000

// procMatch is what a scanner keeps of a process that runs a watched
// program (procEntry).
type procMatch struct {
	exe     string
	file    fileID
	started time.Time
}

// matches reports whether the process pid, whose comm is one of p's,
// runs p and has not exited, with its executable ("" when it cannot be
// read: another user's process, named by a short bare name), for a
// program named by its path the executable's file, and its start time.
// unreadable is why it could not be told: p needs its executable, which
// it is not allowed to read; failed is a scan that failed
// (outOfResources).
func (sc *procScanner) matches(pid, i int) (m procMatch, running bool, unreadable, failed error) {
	p := sc.programs[i]
	exe, err := sc.exe(pid)
	if outOfResources(err) {
		return procMatch{}, false, nil, err
	}
	if p.NeedsPath() && (err != nil || !p.PathMatches(exe)) {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
			unreadable = &seam.OSError{Call: "readlink /proc/" + strconv.Itoa(pid) + "/exe", Err: err}
		}
		return procMatch{}, false, unreadable, nil
	}
	m.exe = exe
	if sc.files[i].path != "" {
		file, same, err := sc.sameFile(pid, i)
		if err != nil || !same {
			return procMatch{}, false, nil, err
		}
		m.file = file
	}
	st, err := sc.stat(pid)
	if err != nil && outOfResources(err) {
		return procMatch{}, false, nil, sc.scanFailed(err)
	}
	if err != nil || st.exited() {
		return procMatch{}, false, nil, nil
	}
	m.started = st.started
	return m, true, nil, nil
}

// sameFile reports whether the process pid runs the file program i's path
// names: the device and inode of /proc/PID/exe (stat follows the magic
// link to the executable itself) against the path's. The text of
// /proc/PID/exe is not enough: a user who may not write the path can
// still show their own executable there, in a mount namespace of their
// own (unshare -Urm, then mount --bind over the path), and the readlink
// of their process gives the path as that namespace shows it. The path's
// file is read when the scanner starts, and read again when a process
// does not run it, so that a program updated (its file replaced) is
// followed: what counts is the file at the path as this process sees it
// now. A process running a file the path named before it was replaced
// ("PATH (deleted)") counts only when it was found before the
// replacement: it keeps the file it matched with (procEntry.file), which
// stillRuns compares it with. file is the process's executable; err is a
// scan that failed (outOfResources): it tells nothing of the process.
func (sc *procScanner) sameFile(pid, i int) (file fileID, same bool, err error) {
	file, err = sc.exeFile(pid)
	if err != nil || !file.ok {
		return fileID{}, false, err
	}
	f := &sc.files[i]
	if f.ok && f.dev == file.dev && f.ino == file.ino {
		return file, true, nil
	}
	if f.dev, f.ino, f.ok, err = sc.statID(f.path); err != nil {
		return fileID{}, false, &seam.OSError{Call: "stat " + f.path, Err: err}
	}
	return file, f.ok && f.dev == file.dev && f.ino == file.ino, nil
}

// exeFile reads the device and inode of the executable the process pid
// runs (ok false when it cannot be read: the process has exited); err is
// a scan that failed (outOfResources).
func (sc *procScanner) exeFile(pid int) (fileID, error) {
	link, err := sc.exeLink(pid)
	if err != nil {
		return fileID{}, err
	}
	var f fileID
	if f.dev, f.ino, f.ok, err = sc.statID(link); err != nil {
		return fileID{}, sc.scanFailed(err)
	}
	return f, nil
}

// stillRuns reports whether the process pid, which matched a watched
// program at an earlier scan and has comm now, is the same process and
// runs the same executable: its stat reads, shows no zombie and the same
// start time, and when comm has changed, /proc/PID/exe is the executable
// it had (a changed comm alone is a renamed thread): for a program named
// by its path, the file it ran when it matched, whatever file the path
// names now (an update replaced it while it runs). Its real user id is
// read again (e.uid): a launcher started by root may drop to a user's id
// before it starts the game. A read that fails for want of resources is
// err, a scan that failed, never an exit.
func (sc *procScanner) stillRuns(pid int, e *procEntry, comm []byte) (bool, error) {
	st, err := sc.stat(pid)
	if err != nil && outOfResources(err) {
		return false, sc.scanFailed(err)
	}
	if err != nil || st.exited() || !st.started.Equal(e.started) {
		return false, nil
	}
	if string(comm) != e.matchComm {
		if same, err := sc.sameExecutable(pid, e); err != nil || !same {
			return false, err
		}
		e.matchComm = string(comm)
	}
	uid, err := sc.uid(pid)
	if err != nil {
		return false, err
	}
	// -1: the status could not be read, as the process exits; the next
	// scan sees it gone.
	if uid >= 0 {
		e.uid = uid
	}
	return true, nil
}

// sameExecutable reports whether the process pid, whose comm changed,
// runs the executable it matched with (stillRuns).
func (sc *procScanner) sameExecutable(pid int, e *procEntry) (bool, error) {
	exe, err := sc.exe(pid)
	if outOfResources(err) {
		return false, err
	}
	if exe != e.exe {
		return false, nil
	}
	if sc.files[e.match].path != "" {
		file, err := sc.exeFile(pid)
		if err != nil || !file.ok || file.dev != e.file.dev || file.ino != e.file.ino {
			return false, err
		}
	}
	return true, nil
}

// exe reads /proc/PID/exe, the executable the process runs, links
// resolved; a replaced executable shows as "PATH (deleted)", and is read
// as PATH: the program runs on. It fails for another user's process
// (EACCES) and one that has exited, and for want of resources
// (outOfResources: a scan that failed).
func (sc *procScanner) exe(pid int) (string, error) {
	path, err := sc.exeLink(pid)
	if err != nil {
		return "", err
	}
	link := make([]byte, 4096)
	n, err := unix.Readlink(path, link)
	if err != nil {
		if outOfResources(err) {
			return "", sc.scanFailed(err)
		}
		return "", err
	}
	if n >= len(link) {
		return "", errors.New("executable path too long")
	}
	return strings.TrimSuffix(string(link[:n]), " (deleted)"), nil
}

// uid reads the real user id of the process pid from /proc/PID/status
// ("Uid:", real first): who started it (a set-user-id program keeps its
// starter's) or whose id it took since (setuid), -1 when it cannot be
// read; err is a scan that failed. In a
// user namespace the kernel shows the id this process's namespace maps it
// to, the one user names here.
func (sc *procScanner) uid(pid int) (int, error) {
	buf := make([]byte, 4096)
	n, err := sc.readFile(sc.root+"/"+strconv.Itoa(pid)+"/status", buf)
	if err != nil {
		if outOfResources(err) {
			return -1, sc.scanFailed(err)
		}
		return -1, nil
	}
	return parseStatusUID(buf[:n]), nil
}

// parseStatusUID reads the real user id of a /proc/PID/status, -1 when it
// has none.
func parseStatusUID(status []byte) int {
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte("Uid:"))
		if !ok {
			continue
		}
		fields := bytes.Fields(rest)
		if len(fields) == 0 {
			return -1
		}
		uid, err := strconv.ParseUint(string(fields[0]), 10, 32)
		if err != nil {
			return -1
		}
		return int(uid)
	}
	return -1
}

// exeLink is the link to the executable the process pid runs:
// /proc/PID/exe, or, when its first thread has exited and the others run
// on (pthread_exit: the leader has no memory map, and its exe link reads
// ENOENT), /proc/PID/task/TID/exe of another of its threads. err is a
// scan that failed for want of resources (outOfResources): the leader's
// link alone would read ENOENT, as if the process had exited.
func (sc *procScanner) exeLink(pid int) (string, error) {
	dir := sc.root + "/" + strconv.Itoa(pid)
	var st unix.Stat_t
	err := sc.statPath(dir+"/exe", &st)
	if outOfResources(err) {
		return "", sc.scanFailed(err)
	}
	if !errors.Is(err, unix.ENOENT) {
		return dir + "/exe", nil
	}
	tasks, err := sc.readDir(dir + "/task")
	if err != nil {
		if outOfResources(err) {
			return "", sc.scanFailed(err)
		}
		return dir + "/exe", nil
	}
	for _, task := range tasks {
		if task.Name() == strconv.Itoa(pid) {
			continue
		}
		err := sc.statPath(dir+"/task/"+task.Name()+"/exe", &st)
		if err == nil {
			return dir + "/task/" + task.Name() + "/exe", nil
		}
		if outOfResources(err) {
			return "", sc.scanFailed(err)
		}
	}
	return dir + "/exe", nil
}

// Unreadable lists the processes the last scan met and could not tell.
func (sc *procScanner) Unreadable() []seam.UnreadableProcess { return sc.unreadable }

// procStat is what a scanner reads from /proc/PID/stat.
type procStat struct {
	state   byte
	flags   uint64
	threads int
	started time.Time
}

// exited reports whether the process has exited: its thread group has,
// not only its first thread. A program whose main thread ends with
// pthread_exit while others run shows its leader as a zombie (state Z)
// with the others counted in num_threads; once the last has exited, a
// zombie counts itself alone.
func (st procStat) exited() bool {
	return (st.state == 'Z' || st.state == 'X') && st.threads <= 1
}

func (sc *procScanner) stat(pid int) (procStat, error) {
	buf := make([]byte, 1024)
	n, err := sc.readFile(sc.root+"/"+strconv.Itoa(pid)+"/stat", buf)
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(buf[:n], sc.boot)
}

// parseProcStat reads the state (field 3), flags (9), number of threads
// (20) and start time (22, clock ticks after boot) of a stat line; its fields are counted after
// the last ")", as comm may hold spaces and parentheses. boot is when the
// machine booted, by the wall clock.
func parseProcStat(line []byte, boot time.Time) (procStat, error) {
	end := bytes.LastIndexByte(line, ')')
	if end < 0 {
		return procStat{}, errors.New("stat has no (comm)")
	}
	fields := strings.Fields(string(line[end+1:]))
	if len(fields) < 20 || len(fields[0]) != 1 {
		return procStat{}, fmt.Errorf("stat has %d fields after comm, want 20 or more", len(fields))
	}
	flags, err1 := strconv.ParseUint(fields[9-3], 10, 64)
	ticks, err2 := strconv.ParseUint(fields[22-3], 10, 64)
	threads, err3 := strconv.ParseUint(fields[20-3], 10, 31)
	if err := errors.Join(err1, err2, err3); err != nil {
		return procStat{}, fmt.Errorf("stat: %w", err)
	}
	st := procStat{state: fields[0][0], flags: flags, threads: int(threads)}
	if !boot.IsZero() {
		st.started = boot.Add(time.Duration(ticks) * time.Second / clockTicksPerSecond)
	}
	return st, nil
}

// bootTime is when the machine booted by the wall clock: now less
// CLOCK_BOOTTIME, which counts from boot (time suspended included, as
// /proc/PID/stat's start time does); zero when it cannot be read.
func bootTime() time.Time {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts) != nil {
		return time.Time{}
	}
	return bootTimeAt(time.Now(), time.Duration(ts.Nano()))
}

// bootTimeAt is when the machine booted, sinceBoot (CLOCK_BOOTTIME) before
// now, by the wall clock only: time.Now's monotonic reading is stripped,
// as Go's monotonic clock (CLOCK_MONOTONIC) stops during a suspend while
// CLOCK_BOOTTIME and /proc's start times do not. With it kept, Sub
// between now and a start time would use the monotonic readings and come
// short by the time suspended since the scanner began (a process
// started N s ago would read as just started).
func bootTimeAt(now time.Time, sinceBoot time.Duration) time.Time {
	return now.Round(0).Add(-sinceBoot)
}

// Close closes the descriptors the scanner keeps.
func (sc *procScanner) Close() {
	for pid, e := range sc.entries {
		if e.comm >= 0 {
			unix.Close(e.comm)
		}
		delete(sc.entries, pid)
	}
	sc.kept = 0
	if sc.loadavg >= 0 {
		unix.Close(sc.loadavg)
		sc.loadavg = -1
	}
	if sc.dir >= 0 {
		unix.Close(sc.dir)
		sc.dir = -1
	}
}
