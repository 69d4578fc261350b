// Package machine assembles the host tickscope measures on this machine:
// package platform's for this OS, with the wait methods of tickscope's own
// precise library registered among the portable ones, so that the tool
// measures the library it ships beside Go's and the OS's waits (both share
// the native waits of package nativewait). cmd/tickscope's machineHost,
// the tools and the tests that measure precise all take their host from
// here, so that each sees the same list.
package machine

import (
	"time"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/precise"
)

// Host returns this machine's host, with precise's wait methods.
func Host() seam.Host { return platform.New(preciseMethods...) }

// preciseMethods are the wait methods of package precise, in the order
// listed: after Go's own, before the pure spin.
var preciseMethods = []platform.PortableMethod{
	{
		Method:    seam.Method{Name: "precise", Summary: "tickscope's precise.Sleep: native sleep to a calibrated margin, then spin", Schedule: seam.Relative},
		NewWaiter: func(delay time.Duration) seam.Waiter { return preciseSleepWaiter{delay: delay} },
	},
	{
		Method:    seam.Method{Name: "precise-ticker", Summary: "tickscope's precise.Ticker (periodic; a tick less than a period late is still delivered)", Schedule: seam.Periodic, CatchesUp: true},
		NewWaiter: func(delay time.Duration) seam.Waiter { return &preciseTickerWaiter{delay: delay} },
	},
}

// preciseSleepWaiter waits with precise.Sleep.
type preciseSleepWaiter struct{ delay time.Duration }

func (w preciseSleepWaiter) Wait(int64) error { precise.Sleep(w.delay); return nil }
func (preciseSleepWaiter) Close() error       { return nil }

// preciseTickerWaiter waits on a precise.Ticker started at the first wait.
type preciseTickerWaiter struct {
	delay  time.Duration
	ticker *precise.Ticker
}

func (w *preciseTickerWaiter) Wait(int64) error {
	if w.ticker == nil {
		w.ticker = precise.NewTicker(w.delay)
	}
	w.ticker.Wait()
	return nil
}

func (w *preciseTickerWaiter) Close() error {
	if w.ticker != nil {
		w.ticker.Stop()
	}
	return nil
}
