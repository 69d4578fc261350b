// Package ui serves `tickscope ui`: a dashboard in the user's browser, on
// the loopback interface only, with the timer's live state and buttons for
// what the commands do (measure, bench, apply, apply --persist, startup
// remove, global on|off), each showing the command line that does the same.
// It adds no second implementation of anything: every action calls what the
// command calls (package measure for measure and bench, report.Print for
// the judgement, htmlreport for the charts, package hold for the holds,
// package startup for the startup holder, package inspect for what status
// and who read, package global for the global key), and a refusal is the
// command's own error, word for word.
//
// A server on the loopback that can change system settings is reachable by
// every web page the user opens (through the browser) and by every local
// user. So (server.go): a random token of this run is the first path
// segment of every address, required on every request, static files and
// the event stream included, and compared in constant time; the Host
// header must be the loopback address and port (against DNS rebinding);
// actions are POST only, with the page's own Origin and a JSON body (no
// form another site could post); and the token appears only in the one
// address printed on standard output, never in a log. Its connections are
// bounded as every tickscope server's are (httpserver): timeouts on
// headers, requests and idleness, and a cap on how many are open.
//
// With --simulate the page runs on the model of Windows timers
// and an in-memory System (package sim), says SIMULATED, and
// changes nothing on the machine.
package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/httpserver"
	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/startup"
)

// System is what the dashboard's actions read and change of the OS: the
// parts each use case it calls takes (seam.System, which package platform
// implements and package sim fakes, has them all), and the state files of
// its launcher page, which inspect's include.
type System interface {
	hold.System
	seam.Processes
	startup.System
	global.Key
	inspect.System
}

// Options are what ui runs on and where it writes.
type Options struct {
	// Host and System are this machine's; with Scenario set, Host is the
	// model and System is replaced by an in-memory one.
	Host   seam.Host
	System System
	// Shell opens the browser and, on Windows, runs tickscope elevated.
	Shell seam.Shell
	// Scenario is the model's scenario ("" on this machine), Seed its seed.
	Scenario string
	Seed     uint64
	// NoBrowser prints the address without opening the browser.
	NoBrowser bool
	// Tray shows the notification-area icon where there is one (Windows).
	Tray           bool
	Stdout, Stderr io.Writer
	// Limits bound the HTTP server's connections (zero fields:
	// httpserver.Defaults; tests shorten them).
	Limits httpserver.Limits
}

// Run serves the page on a free port of 127.0.0.1 until ctx ends (Ctrl+C)
// or the tray's Quit, then releases what the page holds; the startup
// holder is not the page's and runs on.
func Run(ctx context.Context, o Options) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return &seam.OSError{Call: "listen on 127.0.0.1", Err: err}
	}
	s, err := New(o, ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	defer s.Close()
	// net/http logs a few failures (a broken handshake, a panic); none
	// carries the token, and redacting keeps it so if one ever did.
	srv := httpserver.New(s, o.Limits, log.New(redacting{w: o.Stderr, secret: s.token}, "tickscope: warning: ui server: ", 0))
	var opener string
	if !o.NoBrowser {
		path, remove, err := launcher(o.System, s.URL(), o.Stderr)
		if err != nil {
			return err
		}
		defer remove()
		opener = path
		s.mu.Lock()
		s.loaded = sync.OnceFunc(remove)
		s.mu.Unlock()
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	prefix := report.SimulatedPrefix(o.Scenario)
	fmt.Fprintf(o.Stdout, "%stickscope ui: %s\n", prefix, s.URL())
	fmt.Fprintf(o.Stdout, "%sclosing the page ends nothing; Ctrl+C here quits and releases what the page holds\n", prefix)
	if !o.NoBrowser {
		if err := o.Shell.OpenURL(opener); err != nil {
			fmt.Fprintf(o.Stderr, "tickscope: warning: the browser could not be opened (%v): open the address above\n", err)
		}
	}
	quit := make(chan struct{})
	var trayGone <-chan struct{}
	if o.Tray {
		if trayGone, err = startTray(s, quit); err != nil {
			fmt.Fprintf(o.Stderr, "tickscope: warning: no tray icon: %v\n", err)
		}
	}
	select {
	case <-ctx.Done():
	case <-quit:
	case err := <-served:
		return fmt.Errorf("ui server: %w", err)
	}
	// The event streams end with the server's context, so that Shutdown
	// finds every connection idle.
	s.Close()
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// The tray's icon and a read of who holds the timer end with the
	// server's context: wait for them, a while, so that the icon is gone
	// and no read runs when tickscope exits.
	s.mu.Lock()
	whoRead := s.holders.reading
	s.mu.Unlock()
	for _, gone := range []<-chan struct{}{trayGone, whoRead} {
		if gone == nil {
			continue
		}
		select {
		case <-gone:
		case <-shutdown.Done():
			fmt.Fprintln(o.Stderr, "tickscope: warning: quitting without waiting longer for the tray icon or a read of who holds the timer")
			return nil
		}
	}
	return nil
}

// redacting writes what it is given with the secret replaced.
type redacting struct {
	w      io.Writer
	secret string
}

func (r redacting) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, strings.ReplaceAll(string(p), r.secret, "[token]")); err != nil {
		return 0, err
	}
	return len(p), nil
}
