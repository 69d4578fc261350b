// Package platform implements tickscope's one seam to the operating system
// (the interfaces and types are package seam's): what the OS reports about
// its timers, the timer settings a process can request, the wait methods it
// offers, the high-resolution clock that times them (seam.Host), and what
// the hold commands change outside a measurement (seam.System).
//
// Each OS has one file: host_windows.go, host_linux.go, and host_other.go,
// which says plainly what is not supported elsewhere. The model of Windows
// timers implements the same Host interface, so everything above this package
// runs unchanged against a real machine or a simulated one.
package platform
