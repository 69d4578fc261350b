//go:build !windows

package ui

// startTray: the tray icon is Windows' (tray_windows.go); elsewhere the
// page is all there is.
func startTray(*Server, chan<- struct{}) (<-chan struct{}, error) { return nil, nil }
