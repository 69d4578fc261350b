// Package escape lets the user stop long work with the ESC key. It puts the
// terminal in a mode where keys arrive one at a time without echo, keeping
// Ctrl+C's signal and the terminal's output processing as they were, and
// calls stop when ESC arrives. Where standard input is not a terminal it
// does nothing: pipes and scripts stop with a signal.
package escape

import (
	"os"

	"golang.org/x/term"
)

// esc is the byte the ESC key sends.
const esc = 0x1b

// Watch calls stop when ESC is pressed, until the returned restore is
// called, which also puts the terminal back as it was.
func Watch(stop func()) (restore func()) {
	fd := int(os.Stdin.Fd())
	if !term.IsTerminal(fd) {
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
