//go:build !unix

package httpserver

// descriptorLimit is 0 where there is no small per-process limit on
// descriptors (Windows' sockets are handles, counted in millions): the
// table takes its largest size.
func descriptorLimit() uint64 { return 0 }

// outOfDescriptors is false: there is no such failure to recover from.
func outOfDescriptors(error) bool { return false }
