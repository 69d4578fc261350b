//go:build linux || darwin

package platform

import (
	"os"
	"os/signal"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/tickscope/tickscope/internal/nativewait"
	"github.com/tickscope/tickscope/internal/seam"
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
	// heard is signalled (without blocking) as each continue is told.
	heard chan struct{}

	mu   sync.Mutex
	seen []int64
}

func newContinueWatch(suspended func() int64) *continueWatch {
	w := &continueWatch{signals: make(chan os.Signal, 64), done: make(chan struct{}), ended: make(chan struct{}), suspended: suspended, heard: make(chan struct{}, 1)}
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
				select {
				case w.heard <- struct{}{}:
				default:
				}
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

var _ seam.ContinueAwaiter = (*continueWatch)(nil)

// AwaitContinue returns once a continue seen at or after since has been
// told, or after timeout.
func (w *continueWatch) AwaitContinue(since int64, timeout time.Duration) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		w.mu.Lock()
		told := len(w.seen) > 0 && w.seen[len(w.seen)-1] >= since
		w.mu.Unlock()
		if told {
			return
		}
		select {
		case <-w.heard:
		case <-timer.C:
			return
		case <-w.done:
			return
		}
	}
}

func (w *continueWatch) Close() {
	signal.Stop(w.signals)
	close(w.done)
	<-w.ended
}
