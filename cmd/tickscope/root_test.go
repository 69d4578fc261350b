package main

import (
	"testing"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
)

func TestDoubleClicked(t *testing.T) {
	for console, want := range map[seam.Console]bool{seam.ConsoleShared: false, seam.ConsoleNone: false, seam.ConsoleAlone: true} {
		if got := doubleClicked(&sim.System{ConsoleState: console}); got != want {
			t.Errorf("console %d: double-clicked %v, want %v", console, got, want)
		}
	}
}
