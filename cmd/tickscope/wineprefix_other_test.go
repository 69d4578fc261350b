//go:build !linux

package main

import (
	"fmt"
	"os"
	"syscall"
)

// signalPrefix does nothing: the Wine tests run on Linux only.
func (w *wineSetup) signalPrefix(prefix string, sig syscall.Signal, which func(exe string) bool) {}

const wineOverranName = ".wine-overran"

// wineBounded refuses: the Wine tests run on Linux only.
func wineBounded(args []string) int {
	fmt.Fprintln(os.Stderr, "tickscope-wine: the Wine tests run on Linux only")
	return 2
}

type wineProcess struct{ pid int }

// prefixProcesses finds none: the Wine tests run on Linux only.
func prefixProcesses(wineDir, prefix string) []wineProcess { return nil }

func describeProcess(pid int, backtrace bool) string { return "" }

// sessionState finds none: the Wine tests run on Linux only.
func sessionState(wineDir, prefix string) (server, session bool) { return false, false }
