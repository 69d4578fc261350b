package platform

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tickscope's instance locks (seam.BenchLock, seam.HolderLock,
// seam.WhoLock) and the records that name their holders live where only
// the user who runs tickscope (or root, or an administrator) can write:
// another user must be able neither to hold one, nor to name a process
// for tickscope to signal, nor to point one at a file for tickscope to
// write. On Linux they are files in a directory of the user's (lock_unix.go),
// locked with open file description locks that a probe can test without
// taking (lock_linux.go); on Windows they are named mutexes, with the
// record under the user's profile (lock_windows.go).

// RuntimeDirEnv names a directory to keep tickscope's locks in instead of
// the default, on Unix: a test's own, or a second set of instances that
// must not see the first. It is checked as the default is. Windows keeps
// its locks in named mutexes, and ignores it.
const RuntimeDirEnv = "TICKSCOPE_RUNTIME_DIR"

// heldLock is what a probe reads of a lock another process holds: the
// process id its record names (0 when it names none) and who wrote the
// record (a uid on Unix, a SID on Windows), and where the record is.
type heldLock struct {
	PID    int
	Writer string
	Record string
}

// parseRecord reads a lock's record: a process id in decimal and a
// newline, as Lock writes it. Anything else names no process (0).
func parseRecord(data []byte) int {
	text, ok := strings.CutSuffix(string(data), "\n")
	if !ok || text == "" || len(text) > 10 || strings.TrimLeft(text, "0123456789") != "" || text[0] == '0' {
		return 0
	}
	pid, err := strconv.Atoi(text)
	if err != nil || pid > 1<<31-1 {
		return 0
	}
	return pid
}

// formatRecord is what Lock writes in its record.
func formatRecord(pid int) []byte { return []byte(strconv.Itoa(pid) + "\n") }

// recordedProcess is what the OS says of the process a lock's record
// names, read before tickscope signals it.
type recordedProcess struct {
	PID int
	// Exe is the executable it runs, as the OS names it.
	Exe string
	// Owner is the user it runs as: a uid on Unix, a SID on Windows.
	Owner string
}

// mayEnd is the rule a process named by the holder's record must pass
// before tickscope ends it: it runs one of the executables allowed (this
// tickscope's; on Windows also its windowless holder beside it), compared
// by sameExe, and runs as the caller or as whoever wrote the record. A
// record another user could write would otherwise aim tickscope's rights at
// any process; one only the user can write still names a process id that
// may have been reused since. The error says which process was refused and
// why; a path from the OS is quoted, as a file name can hold anything.
func mayEnd(p recordedProcess, h heldLock, allowed []string, sameExe func(a, b string) bool, caller string) error {
	match := false
	for _, exe := range allowed {
		match = match || sameExe(p.Exe, exe)
	}
	if !match {
		quoted := make([]string, len(allowed))
		for i, exe := range allowed {
			quoted[i] = quotePath(exe)
		}
		return fmt.Errorf("not ending process %d, which the holder's record %s names: it runs %s, not this tickscope (%s)", p.PID, h.Record, quotePath(p.Exe), strings.Join(quoted, " or "))
	}
	if p.Owner != caller && p.Owner != h.Writer {
		return fmt.Errorf("not ending process %d, which the holder's record %s names: it runs as %s, neither you (%s) nor the record's writer (%s)", p.PID, h.Record, p.Owner, caller, h.Writer)
	}
	return nil
}

// quotePath quotes a path another process or a file gave: as it is
// between double quotes when it is valid UTF-8 with no control character
// (a Windows path keeps its single backslashes), else Go-quoted, so that
// no byte of it can drive a terminal.
func quotePath(path string) string {
	if utf8.ValidString(path) && !strings.ContainsFunc(path, func(r rune) bool { return unicode.IsControl(r) || r == '"' }) {
		return `"` + path + `"`
	}
	return strconv.Quote(path)
}
