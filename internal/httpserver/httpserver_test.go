package httpserver_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/httpserver"
)

// generous is how long a test waits for what must happen: far longer than
// any timeout it sets, so that a loaded machine only makes it slower.
const generous = 30 * time.Second

// short are bounds a test can wait out.
var short = httpserver.Limits{ReadHeader: 200 * time.Millisecond, Read: 300 * time.Millisecond, Write: 300 * time.Millisecond, Idle: 200 * time.Millisecond, MaxConns: 8}

// countingListener counts the connections accepted from it, those still
// open, and the most open at once.
type countingListener struct {
	net.Listener
	accepted, open, most atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
		open := l.open.Add(1)
		for most := l.most.Load(); open > most && !l.most.CompareAndSwap(most, open); most = l.most.Load() {
		}
		c = &countedConn{Conn: c, open: &l.open}
	}
	return c, err
}

type countedConn struct {
	net.Conn
	open *atomic.Int64
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.open.Add(-1) })
	return c.Conn.Close()
}

// serve serves h within limits on a loopback port.
func serve(t *testing.T, h http.Handler, limits httpserver.Limits) (string, *countingListener) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	counting := &countingListener{Listener: ln}
	srv := httpserver.New(h, limits, nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(counting) }()
	t.Cleanup(func() {
		srv.Close()
		if err := <-done; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), counting
}

var forbidden = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	http.Error(w, "forbidden", http.StatusForbidden)
})

// closedByServer waits until the server closes c: a read ends in EOF or a
// reset, not in the test's own deadline.
func closedByServer(t *testing.T, c net.Conn, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(generous))
	_, err := io.Copy(io.Discard, c)
	var netErr net.Error
	if errors.As(err, &netErr) && netErr.Timeout() {
		t.Errorf("%s: still open after %v", what, generous)
	}
}

// TestIdleConnectionsAreClosed: a connection that sends nothing, sends
// part of its headers, sends part of its body, or stays open after an
// answer (a 403 here) is closed by the server.
func TestIdleConnectionsAreClosed(t *testing.T) {
	addr, counting := serve(t, forbidden, short)
	for _, tt := range []struct{ name, send string }{
		{"nothing sent", ""},
		{"half a header", "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "},
		{"half a body", "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789"},
		{"idle after a 403", "GET / HTTP/1.1\r\nHost: x\r\n\r\n"},
		{"idle after two answers", "GET / HTTP/1.1\r\nHost: x\r\n\r\nGET /x HTTP/1.1\r\nHost: x\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, tt.send); err != nil {
				t.Fatal(err)
			}
			closedByServer(t, c, tt.name)
		})
	}
	waitFor(t, "every connection closed on the server's side", func() bool { return counting.open.Load() == 0 })
}

// TestKeptAliveWhileUsed: a connection used more often than the idle
// bound stays one connection (keep-alive works; only idleness ends it).
func TestKeptAliveWhileUsed(t *testing.T) {
	limits := short
	limits.Idle = generous
	addr, counting := serve(t, forbidden, limits)
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for range 5 {
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("status %d", resp.StatusCode)
		}
	}
	if n := counting.accepted.Load(); n != 1 {
		t.Errorf("5 requests took %d connections, want 1 kept alive", n)
	}
}

// TestStreamOutlivesTheWriteBound: a stream that extends its deadline
// before each write (ExtendWrite) runs longer than the Write bound.
func TestStreamOutlivesTheWriteBound(t *testing.T) {
	const events = 8
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range events {
			if err := httpserver.ExtendWrite(w, r); err != nil {
				t.Errorf("ExtendWrite: %v", err)
				return
			}
			fmt.Fprintf(w, "data: %d\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(short.Write / 3)
		}
	})
	addr, _ := serve(t, stream, short)
	resp, err := http.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	got := 0
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "data: ") {
			got++
		}
	}
	if got != events {
		t.Errorf("the stream gave %d of %d events in %v (Write bound %v)", got, events, time.Since(start), short.Write)
	}
}

// TestConnectionCap: of 200 connections opened at once and left idle,
// the server accepts every one at once (none is left in the kernel's
// backlog) but holds at most MaxConns open, closing waiting ones to make
// room for the next; its descriptors grow by no more, and all 200 are
// closed in the end.
func TestConnectionCap(t *testing.T) {
	limits := short
	limits.ReadHeader = generous // only the cap closes a connection
	addr, counting := serve(t, forbidden, limits)
	before := openDescriptors(t)
	conns := make([]net.Conn, 0, 200)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	waitFor(t, "all 200 connections accepted", func() bool { return counting.accepted.Load() == 200 })
	// MaxConns, and the one accepted before it closes another.
	if most := counting.most.Load(); most > int64(limits.MaxConns+1) {
		t.Errorf("the server held %d of 200 idle connections open at once, want at most MaxConns = %d (and the one being accepted)", most, limits.MaxConns)
	}
	if before >= 0 {
		// 200 are the client's ends; the server's share is the rest.
		if grew := openDescriptors(t) - before - 200; grew > limits.MaxConns+4 {
			t.Errorf("the process's descriptors grew by %d beyond the clients' 200, want at most MaxConns = %d (and a few)", grew, limits.MaxConns)
		}
	}
	waitFor(t, "MaxConns connections left open", func() bool { return counting.open.Load() == int64(limits.MaxConns) })
	for _, c := range conns {
		c.Close()
	}
	conns = conns[:0]
	waitFor(t, "every connection closed on the server's side", func() bool { return counting.open.Load() == 0 })
}

// TestCapReleasedByTimeouts: 200 connections that never send anything are
// all closed by the server in the end, and a request after them is
// answered.
func TestCapReleasedByTimeouts(t *testing.T) {
	limits := short
	limits.ReadHeader, limits.MaxConns = 50*time.Millisecond, 20
	addr, counting := serve(t, forbidden, limits)
	conns := make([]net.Conn, 0, 200)
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Go(func() { closedByServer(t, c, fmt.Sprintf("connection %d", i)) })
	}
	wg.Wait()
	if n := counting.accepted.Load(); n != 200 {
		t.Errorf("%d accepted, want all 200", n)
	}
	resp, err := (&http.Client{Timeout: generous}).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("after the idle connections: %d", resp.StatusCode)
	}
}

// ownerBound is how long the owner's request may take while a flood runs.
const ownerBound = time.Second

// TestFloodDoesNotLockOutTheOwner: while 300 connections that send
// nothing are held open (each reopened as soon as the server closes it),
// a real request on a new connection is answered within ownerBound, five
// times in a row: with the default limits (the flood fits in the table),
// and with a table of 128 (every new connection closes an idle one).
func TestFloodDoesNotLockOutTheOwner(t *testing.T) {
	for _, tt := range []struct {
		name   string
		limits httpserver.Limits
	}{
		{"defaults", httpserver.Limits{}},
		// Only the cap closes a flood's connection.
		{"full table", httpserver.Limits{ReadHeader: generous, MaxConns: 128}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr, counting := serve(t, forbidden, tt.limits)
			reopened, _ := flood(t, addr, 300)
			for i := range 5 {
				if took, err := ownerRequest(addr); err != nil {
					t.Fatalf("request %d during a flood of 300 (%d reopened): %v after %v, want an answer within %v", i, reopened.Load(), err, took, ownerBound)
				}
			}
			limits := httpserver.New(forbidden, tt.limits, nil).Limits()
			if most := counting.most.Load(); most > int64(limits.MaxConns+1) {
				t.Errorf("%d connections open at once, want at most MaxConns = %d (and the one being accepted)", most, limits.MaxConns)
			}
		})
	}
}

// TestServedAreNotShed: a request being served (its handler waiting) and
// a stream are not closed to make room for a flood, which still gets
// answers of its own; once every slot holds a request being served, a new
// connection is closed at once, not left waiting.
func TestServedAreNotShed(t *testing.T) {
	release := make(chan struct{})
	started := make(chan string, 128)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wait":
			started <- r.URL.Path
			<-release
			io.WriteString(w, "waited")
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			started <- r.URL.Path
			for i := 0; ; i++ {
				select {
				case <-release:
					return
				case <-time.After(20 * time.Millisecond):
				}
				if httpserver.ExtendWrite(w, r) != nil {
					return
				}
				if _, err := fmt.Fprintf(w, "data: %d\n\n", i); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		default:
			forbidden(w, r)
		}
	})
	const maxConns = 128
	addr, counting := serve(t, h, httpserver.Limits{ReadHeader: generous, MaxConns: maxConns})
	served := make(chan error, maxConns)
	get := func(path string) {
		resp, err := rawGet(addr, path, generous)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: status %d", path, resp.StatusCode)
		}
		served <- err
	}
	go get("/wait")
	go get("/stream")
	for range 2 {
		<-started
	}

	reopened, stop := flood(t, addr, 300)
	if took, err := ownerRequest(addr); err != nil {
		t.Fatalf("a request during a flood of 300 (%d reopened): %v after %v", reopened.Load(), err, took)
	}
	stop()
	waitFor(t, "the flood's connections closed", func() bool { return counting.open.Load() == 2 })

	// Fill the rest with requests being served.
	for range maxConns - 2 {
		go get("/wait")
	}
	for range maxConns - 2 {
		<-started
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(generous))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil || isTimeout(err) {
		t.Errorf("a new connection while every slot is served: read %d, %v; want it closed at once", n, err)
	}

	close(release)
	for range maxConns {
		if err := <-served; err != nil {
			t.Errorf("a request being served was cut off: %v", err)
		}
	}
}

func isTimeout(err error) bool {
	var netErr net.Error
	return errors.As(err, &netErr) && netErr.Timeout()
}

// flood holds n connections to addr that send nothing, each reopened as
// soon as the server closes it, until stop, the test's end, or generous
// has passed; it returns once all n have connected (accepted, or waiting
// in the kernel's backlog), with the count of reopened connections.
func flood(t *testing.T, addr string, n int) (reopened *atomic.Int64, stop func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), generous)
	var wg sync.WaitGroup
	stop = sync.OnceFunc(func() {
		cancel()
		wg.Wait()
	})
	t.Cleanup(stop)
	reopened = new(atomic.Int64)
	connected := make(chan error, n)
	for range n {
		wg.Go(func() {
			var d net.Dialer
			for first := true; ctx.Err() == nil; first = false {
				c, err := d.DialContext(ctx, "tcp", addr)
				if first {
					connected <- err
				}
				if err != nil {
					return
				}
				if !first {
					reopened.Add(1)
				}
				stop := context.AfterFunc(ctx, func() { c.Close() })
				io.Copy(io.Discard, c) // until the server closes it
				stop()
				c.Close()
			}
		})
	}
	for range n {
		if err := <-connected; err != nil {
			t.Fatalf("the flood's connection: %v", err)
		}
	}
	return reopened, stop
}

// ownerRequest is one GET on a new connection, as a scraper or a page
// makes it, with ownerBound to be answered.
func ownerRequest(addr string) (time.Duration, error) {
	start := time.Now()
	resp, err := rawGet(addr, "/", ownerBound)
	if err == nil && resp.StatusCode != http.StatusForbidden {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(start), err
}

// rawGet sends a GET on a new connection as soon as it is connected (as
// curl, a browser or a scraper in a process of its own does; an
// http.Client in this process would write it from a goroutine of its
// own, behind the flood's) and reads the whole answer, within bound.
func rawGet(addr, path string, bound time.Duration) (*http.Response, error) {
	c, err := net.DialTimeout("tcp", addr, bound)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(bound))
	if _, err := io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); err != nil {
		return nil, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp, err
}

// TestDefaults: a zero Limits takes Defaults, each of which is set.
func TestDefaults(t *testing.T) {
	got := httpserver.New(forbidden, httpserver.Limits{}, nil).Limits()
	if got != httpserver.Defaults {
		t.Errorf("zero Limits gave %+v, want Defaults %+v", got, httpserver.Defaults)
	}
	d := httpserver.Defaults
	if d.ReadHeader <= 0 || d.Read <= 0 || d.Write <= 0 || d.Idle <= 0 || d.MaxConns <= 0 {
		t.Errorf("a default is unset: %+v", d)
	}
	if ctx := context.Background(); httpserver.ExtendWrite(nil, (&http.Request{}).WithContext(ctx)) != nil {
		t.Error("ExtendWrite outside a Server did something")
	}
}

// openDescriptors counts this process's open descriptors (-1 where
// /proc/self/fd does not exist).
func openDescriptors(t *testing.T) int {
	if runtime.GOOS != "linux" {
		return -1
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(generous); !done(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not after %v: %s", generous, what)
		}
	}
}
