package ui

import (
	"fmt"
	"log"
	"runtime"
	"time"

	"fyne.io/systray"
)

// startTray puts tickscope's icon in the notification area
// (fyne.io/systray, which needs no cgo on Windows): its tooltip is the
// current period, and its menu opens the page, holds the last bench's
// recommendation, releases, and quits (closing quit). The icon's window
// and message loop live on one OS thread of their own; done is closed
// once the icon is gone.
func startTray(s *Server, quit chan<- struct{}) (done <-chan struct{}, err error) {
	// systray reports its failures (no desktop, as under Wine without a
	// display) through the standard logger, which nothing else in
	// tickscope uses: give them the house's prefix, on standard error.
	log.SetOutput(s.o.Stderr)
	log.SetFlags(0)
	log.SetPrefix("tickscope: warning: tray icon: ")
	icon := trayIcon()
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		runtime.LockOSThread()
		systray.Run(func() { trayReady(s, icon, quit) }, nil)
	}()
	return gone, nil
}

func trayReady(s *Server, icon []byte, quit chan<- struct{}) {
	systray.SetIcon(icon)
	systray.SetTitle("tickscope")
	open := systray.AddMenuItem("Open", "Open the dashboard in the browser")
	holdItem := systray.AddMenuItem("Hold at the recommended setting", "Hold the last bench's recommendation until Release or Quit")
	release := systray.AddMenuItem("Release", "Release what tickscope ui holds")
	systray.AddSeparator()
	quitItem := systray.AddMenuItem("Quit", "Quit tickscope ui and release what it holds (not the startup holder)")
	report := func(out *Outcome) {
		if out.Error != "" {
			fmt.Fprintf(s.o.Stderr, "tickscope: error: %s\n", out.Error)
		}
	}
	refresh := func() {
		v := s.trayView()
		systray.SetTooltip(v.Tooltip)
		holdItem.SetTitle(v.HoldTitle)
		enable(holdItem, v.CanHold)
		enable(release, v.CanRelease)
	}
	refresh()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			refresh()
		case <-open.ClickedCh:
			if err := s.o.Shell.OpenURL(s.URL()); err != nil {
				fmt.Fprintf(s.o.Stderr, "tickscope: warning: the browser could not be opened (%v)\n", err)
			}
		case <-holdItem.ClickedCh:
			report(s.trayHold())
			refresh()
		case <-release.ClickedCh:
			report(s.release())
			s.notify()
			refresh()
		case <-quitItem.ClickedCh:
			systray.Quit()
			close(quit)
			return
		case <-s.ctx.Done():
			systray.Quit()
			return
		}
	}
}

func enable(item *systray.MenuItem, on bool) {
	if on {
		item.Enable()
	} else {
		item.Disable()
	}
}
