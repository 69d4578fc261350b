package term

import (
	"context"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	xterm "golang.org/x/term"
)

// Bar is a progress bar, or nothing when its writer is not a terminal.
type Bar struct {
	bar *progressbar.ProgressBar
}

// NewBar starts a bar of total steps described by what, on w when it is a
// terminal.
func NewBar(w io.Writer, total int, what string) *Bar {
	f, ok := w.(*os.File)
	if !ok || !xterm.IsTerminal(int(f.Fd())) {
		return &Bar{}
	}
	return &Bar{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100_000_000),
	)}
}

// Update sets the steps done; it is a sample.Progress.
func (p *Bar) Update(done, _ int) {
	if p.bar != nil {
		_ = p.bar.Set(done)
	}
}

// UpdateTotal is Update for work whose total grows as it learns (the
// adaptive bench).
func (p *Bar) UpdateTotal(done, total int) {
	if p.bar != nil {
		p.bar.ChangeMax(total)
		_ = p.bar.Set(done)
	}
}

// Finish removes the bar, whether the work completed or was stopped.
func (p *Bar) Finish() {
	if p.bar != nil {
		_ = p.bar.Clear()
		_ = p.bar.Exit()
	}
}

// Stoppable derives a context that ESC cancels too (Ctrl+C already cancels
// the parent); done restores the terminal.
func Stoppable(parent context.Context) (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(parent)
	restore := WatchEscape(cancel)
	return ctx, func() {
		restore()
		cancel()
	}
}
