package platform

import (
	"time"

	"github.com/tickscope/tickscope/internal/seam"
)

// PortableMethod is a wait method that is the same on every OS and is
// given to New by its caller: tickscope's own precise library, which shares
// its native waits with this package (package nativewait) and is measured
// through it. Package machine registers precise's.
type PortableMethod struct {
	seam.Method
	// NewWaiter prepares a waiter for waits of delay.
	NewWaiter func(delay time.Duration) seam.Waiter
}

// portableMethods are the methods every OS has, in Go: what most Go
// programs use, the registered extra ones (tickscope's precise), and a pure
// spin on the host's clock, last, as the floor every other method is
// compared with. They are on every host's list so that users can compare
// them with the native ones.
func portableMethods(extra []PortableMethod) []seam.Method {
	methods := []seam.Method{
		{Name: "go", Summary: "Go's time.Sleep", Schedule: seam.Relative},
		{Name: "go-until", Summary: "Go's time.Sleep to each deadline (periodic)", Schedule: seam.Periodic},
		{Name: "go-ticker", Summary: "Go's time.Ticker (periodic)", Schedule: seam.Periodic, CatchesUp: true},
	}
	for _, m := range extra {
		methods = append(methods, m.Method)
	}
	return append(methods, seam.Method{Name: "spin", Summary: "a pure spin on the high-resolution clock (periodic; one CPU busy)", Schedule: seam.Periodic})
}

// newPortableWaiter returns a portable method's waiter, or nil.
func newPortableWaiter(method string, delay time.Duration, now func() int64, extra []PortableMethod) seam.Waiter {
	switch method {
	case "go":
		return goSleepWaiter{delay: delay}
	case "go-until":
		return goUntilWaiter{now: now}
	case "go-ticker":
		return &goTickerWaiter{delay: delay}
	case "spin":
		return spinWaiter{now: now}
	}
	for _, m := range extra {
		if m.Name == method {
			return m.NewWaiter(delay)
		}
	}
	return nil
}

// goSleepWaiter waits with Go's time.Sleep.
type goSleepWaiter struct{ delay time.Duration }

func (w goSleepWaiter) Wait(int64) error { time.Sleep(w.delay); return nil }
func (goSleepWaiter) Close() error       { return nil }

// goUntilWaiter sleeps with Go's time.Sleep until the deadline: what a Go
// loop that keeps its own schedule does.
type goUntilWaiter struct{ now func() int64 }

func (w goUntilWaiter) Wait(deadline int64) error {
	if d := deadline - w.now(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	return nil
}
func (goUntilWaiter) Close() error { return nil }

// hybridWaiter sleeps natively until a fixed margin before the deadline,
// then spins: spin_sleep's design, with its fixed margins, against which
// precise's calibrated margin is measured.
//
//lint:ignore U1000 the Linux and Windows hosts offer it; macOS's has Go's own waits only
type hybridWaiter struct {
	sleepUntil func(deadline int64) error
	close      func() error
	now        func() int64
	margin     int64
}

func (w hybridWaiter) Wait(deadline int64) error {
	if err := w.sleepUntil(deadline - w.margin); err != nil {
		return err
	}
	for w.now() < deadline {
	}
	return nil
}

func (w hybridWaiter) Close() error { return w.close() }

// goTickerWaiter receives from a time.Ticker started at the first wait, so
// that its ticks fall at or after the loop's deadlines.
type goTickerWaiter struct {
	delay  time.Duration
	ticker *time.Ticker
}

func (w *goTickerWaiter) Wait(int64) error {
	if w.ticker == nil {
		w.ticker = time.NewTicker(w.delay)
	}
	<-w.ticker.C
	return nil
}

func (w *goTickerWaiter) Close() error {
	if w.ticker != nil {
		w.ticker.Stop()
	}
	return nil
}

// spinWaiter spins on the host's clock until the deadline.
type spinWaiter struct{ now func() int64 }

func (w spinWaiter) Wait(deadline int64) error {
	for w.now() < deadline {
	}
	return nil
}
func (spinWaiter) Close() error { return nil }
