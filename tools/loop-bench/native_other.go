//go:build !linux

package main

// Outside Linux there is no clock_nanosleep to compare: the common methods
// only.
func methods() []method { return commonMethods() }
