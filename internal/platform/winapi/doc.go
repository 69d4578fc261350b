// Package winapi binds, in one file, the Win32 and NT calls tickscope needs
// that golang.org/x/sys/windows lacks. Each binding carries its documented
// signature and where it is documented. It is empty on other OSes.
package winapi
