// Package winapi binds, in one file, the Win32 and NT calls tickscope needs
// that golang.org/x/sys/windows lacks (or binds with the wrong error: the
// winmm calls report an MMRESULT, not GetLastError). Each binding carries
// its documented signature and where it is documented. On other OSes it
// holds only the portable MMRESULT names, so that they are tested there.
package winapi
