package precise

import (
	"testing"
	"time"
)

// A wait returns as soon as its spin ends: its policy learns the wake-up
// (and Stats counts the wait) only when the next wait has time to spare,
// or when Stats is read. The waits are 20 ms long, so that each has time
// to spare however loaded the machine.
func TestWaitLeavesItsBookkeepingForLater(t *testing.T) {
	const ahead = int64(20 * time.Millisecond)
	finished.learn()
	p := newDefaultPolicy(initialMargin)
	if !sleepUntil(p, now()+ahead, nil) {
		t.Fatal("the wait did not complete")
	}
	if p.n != 0 || finished.n.Load() != 1 {
		t.Fatalf("after the wait: the policy has seen %d wake-ups and %d waits are left to learn, want 0 and 1", p.n, finished.n.Load())
	}
	before := Stats().Waits
	if p.n != 1 || finished.n.Load() != 0 {
		t.Fatalf("after Stats: the policy has seen %d wake-ups and %d waits are left, want 1 and 0", p.n, finished.n.Load())
	}
	sleepUntil(p, now()+ahead, nil)
	sleepUntil(p, now()+ahead, nil) // learns the one before
	if p.n != 2 || Stats().Waits != before+2 {
		t.Errorf("after two more waits: the policy has seen %d wake-ups, Stats %d waits more, want 2 and 2", p.n, Stats().Waits-before)
	}
}

// A Ticker keeps what its Wait left to learn and hands it over when the
// next Wait begins (which learns it too if it has time to spare: either
// way it is no longer the ticker's).
func TestTickerHandsItsBookkeepingToTheNextWait(t *testing.T) {
	finished.learn()
	tk := NewTicker(2*time.Millisecond, WithTail(0.99))
	defer tk.Stop()
	learned := stats.waits.Load()
	tk.Wait()
	if tk.left.policy != tk.margins || finished.n.Load() != 0 || stats.waits.Load() != learned {
		t.Fatalf("after a Wait: its record kept %v, %d waits left to learn, %d learned", tk.left.policy == tk.margins, finished.n.Load(), stats.waits.Load()-learned)
	}
	tk.Wait()
	if handed := stats.waits.Load() - learned + uint64(finished.n.Load()); handed != 1 || tk.left.policy != tk.margins {
		t.Errorf("after a second Wait: %d records handed over (learned or left to learn), want the first's alone; its own kept %v", handed, tk.left.policy == tk.margins)
	}
}
