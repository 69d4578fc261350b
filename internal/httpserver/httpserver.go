// Package httpserver is how tickscope serves HTTP (ui's page, the
// /metrics of watch --listen and apply --listen): one constructor, so
// that every server is bounded the same way. A connection that sends
// nothing, sends its headers slowly, or stays open idle after an answer
// (a 403 included) is closed after a timeout. A stream (ui's server-sent
// events) has no time limit as a whole: it extends its write deadline
// before each write (ExtendWrite), so that only a reader that stops
// reading is cut off.
//
// Connections are accepted as soon as they arrive, never left in the
// kernel's backlog: a backlog is a queue that whoever fills it is served
// ahead of everyone, so any local user holding a few hundred idle
// connections would lock the owner out. Instead the server keeps a table
// of at most MaxConns open connections (derived from the descriptor limit,
// RLIMIT_NOFILE, where there is one) and, when it is full, makes room for
// the newcomer by closing the connection that has waited longest without
// a request (one accepted that has not sent a complete request header,
// or one kept alive idle after its answer) among those the server has
// read from for 100 ms and heard nothing of: a request that has just
// arrived is read before it could be closed. A connection whose request
// is being served, a stream included, is never closed to make room; when
// every slot holds one, the newcomer is closed at once rather than left
// to wait. A flood of idle connections thus costs at most MaxConns
// descriptors, and a real request waits only for the connections ahead
// of it to be accepted.
package httpserver

import (
	"container/list"
	"context"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
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
	// MaxConns is the most connections open at once (and, for a moment,
	// the one being accepted): when that many are open, a new one closes
	// one of those waiting for a request.
	MaxConns int
}

// Defaults are the bounds of tickscope's servers: a browser or a
// Prometheus scrape on the loopback sends its request headers at once, in
// well under a second, so 2 s is ample; a page keeps a few connections
// (its event stream and the browser's keep-alives), a scraper one, and
// MaxConns is as many as the descriptor limit leaves room for (at most
// 1024), so that a flood of idle connections has many to fill before a
// real request waiting for its headers to be read could be closed.
var Defaults = Limits{
	ReadHeader: 2 * time.Second,
	Read:       10 * time.Second,
	Write:      30 * time.Second,
	Idle:       30 * time.Second,
	MaxConns:   maxConns(descriptorLimit()),
}

// maxConns is the table's size under a descriptor limit of nofile (0:
// none known): half of what is left after 64 for the rest of the process,
// within [16, 1024].
func maxConns(nofile uint64) int {
	const reserve, least, most = 64, 16, 1024
	if nofile == 0 {
		return most
	}
	if nofile <= reserve+2*least {
		return least
	}
	return int(min((nofile-reserve)/2, most))
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
	table  *table
}

// limitsKey carries a server's Limits in its requests' contexts, for
// ExtendWrite.
type limitsKey struct{}

// New makes a server of handler within limits (zero fields: Defaults).
// errorLog receives net/http's own failures (nil: the log package's
// standard logger).
func New(handler http.Handler, limits Limits, errorLog *log.Logger) *Server {
	limits = limits.withDefaults()
	t := &table{max: limits.MaxConns, waiting: list.New(), changed: make(chan struct{}, 1)}
	return &Server{
		limits: limits,
		table:  t,
		srv: &http.Server{
			Handler:           handler,
			ReadHeaderTimeout: limits.ReadHeader,
			ReadTimeout:       limits.Read,
			WriteTimeout:      limits.Write,
			IdleTimeout:       limits.Idle,
			MaxHeaderBytes:    16 << 10,
			ErrorLog:          errorLog,
			ConnState:         t.setState,
			BaseContext: func(net.Listener) context.Context {
				return context.WithValue(context.Background(), limitsKey{}, limits)
			},
		},
	}
}

// Serve accepts connections on l as they arrive, at most MaxConns open at
// once (a new one closing the one waiting longest without a request),
// until Shutdown or Close; it then returns http.ErrServerClosed.
func (s *Server) Serve(l net.Listener) error {
	return s.srv.Serve(&listener{Listener: l, table: s.table})
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

// table holds a server's open connections. Those waiting for a request
// (accepted and not yet sent a complete request header, or idle after an
// answer) are in waiting, longest waiting first; one being served (its
// handler running, a stream or a hijacked connection) is counted but in
// no list, so it is never closed to make room.
type table struct {
	max     int
	mu      sync.Mutex
	open    int
	waiting *list.List // of *conn
	// changed is told (notify) when a connection is closed or first read
	// from.
	changed chan struct{}
}

// grace is how long the server reads from a waiting connection, hearing
// nothing, before it may close it to make room (see victim).
const grace = 100 * time.Millisecond

// admit counts c in the table, closing a waiting connection if the table
// is full; it is false, and c is not counted, when every connection is
// being served.
func (t *table) admit(c *conn) bool {
	var victims []*conn
	defer func() {
		for _, v := range victims {
			v.Conn.Close()
		}
	}()
	start := now()
	until := start + int64(grace)
	t.mu.Lock()
	defer t.mu.Unlock()
	for t.open >= t.max {
		at := now()
		v, wake := t.victim(at)
		if v == nil && wake > 0 && at < until {
			t.mu.Unlock()
			timer := time.NewTimer(time.Duration(min(wake, until) - at))
			select {
			case <-t.changed:
			case <-timer.C:
			}
			timer.Stop()
			t.mu.Lock()
			continue
		}
		// Waited enough (or every waiting connection has sent part of a
		// header): the one waiting longest goes.
		if v == nil {
			front := t.waiting.Front()
			if front == nil {
				return false
			}
			v = front.Value.(*conn)
		}
		t.forget(v)
		victims = append(victims, v)
	}
	t.open++
	c.counted = true
	c.elem = t.waiting.PushBack(c)
	return true
}

// shed closes a waiting connection, if there is one.
func (t *table) shed() {
	t.mu.Lock()
	victim, _ := t.victim(now())
	if victim == nil {
		if front := t.waiting.Front(); front != nil {
			victim = front.Value.(*conn)
		}
	}
	if victim != nil {
		t.forget(victim)
	}
	t.mu.Unlock()
	if victim != nil {
		victim.Conn.Close()
	}
}

// victim is the waiting connection to close to make room at time at: the
// one waiting longest that the server has read from for grace and heard
// nothing of since it began waiting (nil: none). Else wake is when one
// may become so (0: none can, every waiting connection has sent part of
// a header). t.mu is held.
//
// A connection accepted a moment ago may well hold a complete request
// that its goroutine has not run to read, or be read from before its
// client, descheduled on a loaded machine, has written: a flood's
// reconnections, each making room, would otherwise close a real request
// before it is heard. So admit waits up to grace for a connection to
// become a victim before it closes one that may have sent something.
func (t *table) victim(at int64) (c *conn, wake int64) {
	for e := t.waiting.Front(); e != nil; e = e.Next() {
		c := e.Value.(*conn)
		if c.heard.Load() {
			continue
		}
		since := c.listened.Load()
		if since != 0 && at-since >= int64(grace) {
			return c, 0
		}
		w := at + int64(grace) // unread: when it might be
		if since != 0 {
			w = since + int64(grace)
		}
		if wake == 0 || w < wake {
			wake = w
		}
	}
	return nil, wake
}

// epoch is the origin of now.
var epoch = time.Now()

// now is the monotonic time since epoch, in nanoseconds, above 0.
func now() int64 { return int64(time.Since(epoch)) + 1 }

// notify tells a waiting admit that the table changed.
func (t *table) notify() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// forget takes c out of the table; t.mu is held.
func (t *table) forget(c *conn) {
	if !c.counted {
		return
	}
	c.counted = false
	t.open--
	t.notify()
	if c.elem != nil {
		t.waiting.Remove(c.elem)
		c.elem = nil
	}
}

// setState is the server's ConnState: a connection waits for a request
// when accepted and when idle after an answer, and is served from the
// moment its request's headers are read.
func (t *table) setState(nc net.Conn, state http.ConnState) {
	c, ok := nc.(*conn)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !c.counted {
		return
	}
	switch state {
	case http.StateIdle:
		if c.elem == nil {
			c.listened.Store(0)
			c.heard.Store(false)
			c.elem = t.waiting.PushBack(c)
		}
	case http.StateActive, http.StateHijacked:
		if c.elem != nil {
			t.waiting.Remove(c.elem)
			c.elem = nil
		}
	case http.StateClosed:
		t.forget(c)
	}
}

// listener accepts into a table.
type listener struct {
	net.Listener
	table *table
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			// Out of descriptors: close a waiting connection so that the
			// next Accept (net/http retries after a pause) finds one.
			if outOfDescriptors(err) {
				l.table.shed()
			}
			return nil, err
		}
		c := &conn{Conn: nc, table: l.table}
		if l.table.admit(c) {
			return c, nil
		}
		nc.Close()
	}
}

// conn leaves its table once closed.
type conn struct {
	net.Conn
	table *table
	// counted and elem are the table's, under its mu: whether c is
	// counted, and its place in waiting (nil: being served).
	counted bool
	elem    *list.Element
	// listened is when the server first read from c since it began
	// waiting (now; 0: not yet), heard whether it read anything.
	listened atomic.Int64
	heard    atomic.Bool
}

func (c *conn) Read(b []byte) (int, error) {
	if c.listened.Load() == 0 && c.listened.CompareAndSwap(0, now()) {
		c.table.notify()
	}
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.heard.Store(true)
	}
	return n, err
}

func (c *conn) Close() error {
	c.table.mu.Lock()
	c.table.forget(c)
	c.table.mu.Unlock()
	return c.Conn.Close()
}
