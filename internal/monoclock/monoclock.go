// Package monoclock reads Linux's CLOCK_MONOTONIC, the clock
// clock_nanosleep's absolute deadlines are on, as cheaply as Go's own
// monotonic clock. It is shared by the platform host and package precise,
// which cannot import each other.
package monoclock
