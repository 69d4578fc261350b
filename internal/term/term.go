// Package term is what tickscope does with the terminal while long work
// runs: WatchEscape lets the user stop it with the ESC key, Bar shows its
// progress on standard error, and Stoppable joins the two into a context
// that ESC cancels as Ctrl+C does. Where standard input or error is not a
// terminal they do nothing, so that logs, pipes and scripts stay clean and
// stop with a signal.
package term

import (
	"os"

	xterm "golang.org/x/term"
)

// esc is the byte the ESC key sends.
const esc = 0x1b

// WatchEscape calls stop when ESC is pressed, until the returned restore is
// called, which also puts the terminal back as it was. It puts the terminal
// in a mode where keys arrive one at a time without echo, keeping Ctrl+C's
// signal and the terminal's output processing as they were.
func WatchEscape(stop func()) (restore func()) {
	fd := int(os.Stdin.Fd())
	if !xterm.IsTerminal(fd) {
		return func() {}
	}
	undo, err := keysOneByOne(fd)
	if err != nil {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 16)
		for {
			n, err := os.Stdin.Read(buf)
			if err != nil {
				return
			}
			select {
			case <-done:
				return
			default:
			}
			for _, b := range buf[:n] {
				if b == esc {
					stop()
					return
				}
			}
		}
	}()
	return func() {
		close(done)
		undo()
	}
}
