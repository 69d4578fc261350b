//go:build !linux

package main

import "syscall"

// signalPrefix does nothing: the Wine tests run on Linux only.
func (w *wineSetup) signalPrefix(prefix string, sig syscall.Signal, which func(exe string) bool) {}
