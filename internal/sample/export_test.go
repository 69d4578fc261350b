package sample

import "testing"

// RecordMaxProcs replaces the runtime's GOMAXPROCS setters for the rest
// of t: each call is recorded in calls, n for a value set, -1 for Go's
// default turned back on, and nothing changes.
func RecordMaxProcs(t *testing.T, calls *[]int) {
	set, setDefault := setMaxProcs, setDefaultMaxProcs
	setMaxProcs = func(n int) int { *calls = append(*calls, n); return 0 }
	setDefaultMaxProcs = func() { *calls = append(*calls, -1) }
	t.Cleanup(func() { setMaxProcs, setDefaultMaxProcs = set, setDefault })
}
