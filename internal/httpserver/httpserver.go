// Package httpserver is how tickscope serves HTTP (ui's page, the
// /metrics of watch --listen and apply --listen): one constructor, so
// that every server is bounded the same way. A connection that sends
// nothing, sends its headers slowly, or stays open idle after an answer
// (a 403 included) is closed after a timeout, and at most MaxConns
// connections are open at once (more wait in the kernel's backlog, costing
// tickscope no descriptor), so that a local user opening connections
// cannot keep them, or tickscope's descriptors, forever. A stream (ui's
// server-sent events) has no time limit as a whole: it extends its write
// deadline before each write (ExtendWrite), so that only a reader that
// stops reading is cut off.
package httpserver

import (
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits are a server's bounds. A zero field takes Defaults' value.
type Limits struct {
	// ReadHeader bounds reading a request's headers, from the first byte
	// awaited: a connection that sends nothing is closed after it.
	ReadHeader time.Duration
	// Read bounds reading a whole request, body included.
	Read time.Duration
	// Write bounds writing an answer; a stream extends it before each
	// write (ExtendWrite).
	Write time.Duration
	// Idle bounds a kept-alive connection's wait for its next request.
	Idle time.Duration
	// MaxConns is the most connections open at once.
	MaxConns int
}

// Defaults are the bounds of tickscope's servers: a browser or a
// Prometheus scrape on the loopback sends a request in well under a
// second; a page keeps a few connections (its event stream and the
// browser's keep-alives); a scraper one.
var Defaults = Limits{
	ReadHeader: 5 * time.Second,
	Read:       10 * time.Second,
	Write:      30 * time.Second,
	Idle:       30 * time.Second,
	MaxConns:   32,
}

// withDefaults fills l's zero fields from Defaults.
func (l Limits) withDefaults() Limits {
	if l.ReadHeader <= 0 {
		l.ReadHeader = Defaults.ReadHeader
	}
	if l.Read <= 0 {
		l.Read = Defaults.Read
	}
	if l.Write <= 0 {
		l.Write = Defaults.Write
	}
	if l.Idle <= 0 {
		l.Idle = Defaults.Idle
	}
	if l.MaxConns <= 0 {
		l.MaxConns = Defaults.MaxConns
	}
	return l
}

// Server serves one handler within its Limits.
type Server struct {
	srv    *http.Server
	limits Limits
}

// limitsKey carries a server's Limits in its requests' contexts, for
// ExtendWrite.
type limitsKey struct{}

// New makes a server of handler within limits (zero fields: Defaults).
// errorLog receives net/http's own failures (nil: the log package's
// standard logger).
func New(handler http.Handler, limits Limits, errorLog *log.Logger) *Server {
	limits = limits.withDefaults()
	return &Server{
		limits: limits,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: limits.ReadHeader,
			ReadTimeout:       limits.Read,
			WriteTimeout:      limits.Write,
			IdleTimeout:       limits.Idle,
			MaxHeaderBytes:    16 << 10,
			ErrorLog:          errorLog,
			BaseContext: func(net.Listener) context.Context {
				return context.WithValue(context.Background(), limitsKey{}, limits)
			},
		},
	}
}

// Limits are the server's bounds, Defaults filled in.
func (s *Server) Limits() Limits { return s.limits }

// Serve accepts connections on l, at most MaxConns open at once, until
// Shutdown or Close; it then returns http.ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	return s.srv.Serve(LimitListener(l, s.limits.MaxConns))
}

// Shutdown stops accepting, waits for the connections in use to finish
// until ctx ends, and closes them (http.Server.Shutdown).
func (s *Server) Shutdown(ctx context.Context) error { return s.srv.Shutdown(ctx) }

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.srv.Close() }

// ExtendWrite moves the write deadline of a streamed answer (ui's events)
// to the server's Write bound from now, before each write: the stream
// lasts as long as its reader reads. Outside a Server it does nothing.
func ExtendWrite(w http.ResponseWriter, r *http.Request) error {
	limits, ok := r.Context().Value(limitsKey{}).(Limits)
	if !ok {
		return nil
	}
	return http.NewResponseController(w).SetWriteDeadline(time.Now().Add(limits.Write))
}

// LimitListener accepts at most n connections open at once from l: Accept
// waits, without accepting, until one of them is closed (as
// golang.org/x/net/netutil.LimitListener does).
func LimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, slots: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	slots     chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: sync.OnceFunc(func() { <-l.slots })}, nil
}

func (l *limitListener) Close() error {
	err := l.Listener.Close()
	l.closeOnce.Do(func() { close(l.done) })
	return err
}

// limitConn gives its slot back once closed.
type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
