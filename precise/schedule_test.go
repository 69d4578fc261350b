package precise

import (
	"testing"
	"time"
)

// A tick half a period late when Wait is called: the catch-up schedule
// (Skip) delivers it at once and counts nothing; SkipLate skips it, counts
// it, and waits for the next, never returning before that one is due.
func TestSkipLateSkipsATickAlreadyDue(t *testing.T) {
	const period = int64(4 * time.Millisecond)
	for _, tt := range []struct {
		policy     MissedPolicy
		wantMissed uint64
		waitsNext  bool
	}{
		{Skip, 0, false},
		{SkipLate, 1, true},
	} {
		tk := NewTicker(time.Duration(period), WithMissed(tt.policy))
		tk.mu.Lock()
		late := now() - period/2
		tk.next = late
		tk.mu.Unlock()
		if !tk.Wait() {
			t.Fatalf("policy %d: Wait reported stopped", tt.policy)
		}
		woke := now()
		if tt.waitsNext && woke < late+period {
			t.Errorf("SkipLate returned %v before the next tick", time.Duration(late+period-woke))
		}
		if m := tk.Missed(); m != tt.wantMissed {
			t.Errorf("policy %d: Missed() = %d, want %d", tt.policy, m, tt.wantMissed)
		}
		// Either way the schedule is kept: the next tick is one period after
		// the one delivered.
		tk.mu.Lock()
		next := tk.next
		tk.mu.Unlock()
		if delivered := map[bool]int64{false: late, true: late + period}[tt.waitsNext]; next != delivered+period {
			t.Errorf("policy %d: next tick at %d after delivering the one at %d, want a period later", tt.policy, next-late, delivered-late)
		}
		tk.Stop()
	}
}

// Work that overruns by more than a period: SkipLate counts every tick
// that was due when Wait was called.
func TestSkipLateCountsEveryTickPast(t *testing.T) {
	const period = int64(2 * time.Millisecond)
	tk := NewTicker(time.Duration(period), WithMissed(SkipLate))
	defer tk.Stop()
	tk.mu.Lock()
	tk.next = now() - 3*period - period/2 // ticks at −3.5, −2.5, −1.5 and −0.5 periods
	tk.mu.Unlock()
	tk.Wait()
	if m := tk.Missed(); m < 4 {
		t.Errorf("Missed() = %d after a Wait called with four ticks past, want at least 4", m)
	}
}
