//go:build linux || darwin

package platform

import (
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"

	"github.com/tickscope/tickscope/internal/nativewait"
)

// continueWatch is a seam.StopWatch that hears of job control through
// SIGCONT, which the kernel sends a stopped process (kill -STOP, Ctrl+Z)
// as it continues it: each one received means the process had been
// stopped, and it is received after it ran again, on the goroutine of
// Go's signal handling, not the measuring thread. Catching SIGCONT
// changes nothing of what it does: the kernel continues the process as
// the signal is sent, whatever its handler. suspended reads the time the
// machine has been suspended.
type continueWatch struct {
	signals   chan os.Signal
	done      chan struct{}
	ended     chan struct{}
	suspended func() int64

	mu   sync.Mutex
	seen []int64
}

func newContinueWatch(suspended func() int64) *continueWatch {
	w := &continueWatch{signals: make(chan os.Signal, 64), done: make(chan struct{}), ended: make(chan struct{}), suspended: suspended}
	signal.Notify(w.signals, syscall.SIGCONT)
	go func() {
		defer close(w.ended)
		for {
			select {
			case <-w.signals:
				now := nativewait.Now()
				w.mu.Lock()
				w.seen = append(w.seen, now)
				w.mu.Unlock()
			case <-w.done:
				return
			}
		}
	}()
	return w
}

func (w *continueWatch) Suspended() int64 { return w.suspended() }

func (w *continueWatch) Continued() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

func (w *continueWatch) Close() {
	signal.Stop(w.signals)
	close(w.done)
	<-w.ended
}
