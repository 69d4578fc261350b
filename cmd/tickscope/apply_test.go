package main

import (
	"runtime"
	"testing"
	"time"
)

func TestUntilText(t *testing.T) {
	// On Windows the console closing also ends a hold.
	console := map[bool]struct{ all, withFor, noEsc string }{
		false: {"ESC or Ctrl+C", "ESC, Ctrl+C or 1s elapses", "Ctrl+C or 1s elapses"},
		true:  {"ESC, Ctrl+C or the console closes", "ESC, Ctrl+C, the console closes or 1s elapses", "Ctrl+C, the console closes or 1s elapses"},
	}[runtime.GOOS == "windows"]
	tests := []struct {
		o    applyOptions
		want string
	}{
		{applyOptions{}, console.all},
		{applyOptions{holdFor: time.Second}, console.withFor},
		{applyOptions{noEsc: true, holdFor: time.Second}, console.noEsc},
		{applyOptions{noConsole: true}, "ESC (anywhere on the desktop)"},
		{applyOptions{noConsole: true, noEsc: true, holdFor: 200 * time.Millisecond}, "200ms elapses"},
		{applyOptions{noConsole: true, noEsc: true}, "the process is ended"},
	}
	for _, tt := range tests {
		if got := untilText(&tt.o); got != tt.want {
			t.Errorf("untilText(noEsc %v, noConsole %v, for %v) = %q, want %q", tt.o.noEsc, tt.o.noConsole, tt.o.holdFor, got, tt.want)
		}
	}
}
