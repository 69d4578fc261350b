package main

import (
	"context"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/tickscope/tickscope/internal/escape"
)

// progress shows a bar with the time left on standard error when it is a
// terminal, and nothing otherwise, so that logs and pipes stay clean.
type progress struct {
	bar *progressbar.ProgressBar
}

func newProgress(w io.Writer, total int, what string) *progress {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{bar: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100_000_000),
	)}
}

// update is a sample.Progress.
func (p *progress) update(done, _ int) {
	if p.bar != nil {
		_ = p.bar.Set(done)
	}
}

// finish removes the bar, whether the work completed or was stopped.
// updateTotal is update for work whose total grows as it learns.
func (p *progress) updateTotal(done, total int) {
	if p.bar != nil {
		p.bar.ChangeMax(total)
		_ = p.bar.Set(done)
	}
}

func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Clear()
		_ = p.bar.Exit()
	}
}

// stoppable derives a context that ESC cancels too (Ctrl+C already cancels
// the parent); done restores the terminal.
func stoppable(parent context.Context) (ctx context.Context, done func()) {
	ctx, cancel := context.WithCancel(parent)
	restore := escape.Watch(cancel)
	return ctx, func() {
		restore()
		cancel()
	}
}
