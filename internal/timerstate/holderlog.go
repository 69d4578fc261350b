package timerstate

import (
	"fmt"
	"io"
	"strings"

	"github.com/tickscope/tickscope/internal/seam"
)

// HolderLogName is the windowless holder's log, in the user's state
// directory beside its lock's record (seam.StateFiles.StateDir), where no
// other user can plant a link for the holder to empty what it names.
const HolderLogName = "holder.log"

// LastLogLine is the last line of the holder's log, or "" when there is
// none (or it is refused). Only the log's end is read: the last line is
// all status shows.
func LastLogLine(sys seam.StateFiles) string {
	f, err := sys.OpenStateFile(HolderLogName, seam.StateRead)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	data, err := io.ReadAll(io.LimitReader(f, tail))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// ServiceExit says how a stopped service ended.
func ServiceExit(state seam.ServiceState) string {
	switch {
	case state.ServiceSpecific:
		return fmt.Sprintf("service-specific exit code %d", state.ExitCode)
	case state.ExitCode != 0:
		return fmt.Sprintf("exit code %d", state.ExitCode)
	}
	return "exit code 0"
}
