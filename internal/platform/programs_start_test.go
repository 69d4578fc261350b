package platform

import (
	"testing"
	"time"
)

func TestStartKnown(t *testing.T) {
	now := time.Date(2026, 12, 3, 10, 32, 43, 0, time.UTC)
	up := 2 * time.Hour
	for _, c := range []struct {
		name    string
		created time.Time
		want    bool
	}{
		{"an hour ago", now.Add(-time.Hour), true},
		{"just now", now, true},
		{"at boot, rounded a little early", now.Add(-up - 30*time.Second), true},
		{"before boot", now.Add(-up - 2*time.Minute), false},
		{"in 1795, as Wine gave once", time.Date(1795, 6, 1, 0, 0, 0, 0, time.UTC), false},
		{"in 1601, FILETIME zero", time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"in the future", now.Add(2 * time.Minute), false},
	} {
		if got := startKnown(c.created, now, up); got != c.want {
			t.Errorf("%s: startKnown = %v, want %v", c.name, got, c.want)
		}
	}
}
