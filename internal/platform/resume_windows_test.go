package platform

import "testing"

// TestWatchResumeManyTimes: a ui holds and releases again and again, each
// hold watching resumes; windows.NewCallback panics past about 2000
// callbacks a process, so WatchResume must not make one per call, also
// where the registration fails (Wine may lack it).
func TestWatchResumeManyTimes(t *testing.T) {
	failed := 0
	for i := 0; i < 2500; i++ {
		stop, err := system{}.WatchResume(func() {})
		if err != nil {
			failed++
			continue
		}
		stop()
	}
	t.Logf("%d of 2500 registrations failed", failed)
	resumers.Lock()
	defer resumers.Unlock()
	if len(resumers.each) != 0 {
		t.Errorf("%d registrations left after every stop", len(resumers.each))
	}
}
