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

// countingListener counts the connections accepted from it and those
// still open.
type countingListener struct {
	net.Listener
	accepted, open atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
		l.open.Add(1)
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

// TestConnectionCap: of 200 connections opened at once and left idle, the
// server holds at most MaxConns (the rest wait in the kernel's backlog),
// its descriptors grow by no more, and all 200 are closed in the end.
func TestConnectionCap(t *testing.T) {
	limits := short
	limits.ReadHeader = generous // idle until the count is taken
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
	waitFor(t, "MaxConns connections accepted", func() bool { return counting.accepted.Load() >= int64(limits.MaxConns) })
	time.Sleep(100 * time.Millisecond) // room for a wrong accept beyond the cap to show
	if n := counting.accepted.Load(); n != int64(limits.MaxConns) {
		t.Errorf("the server accepted %d of 200 idle connections, want MaxConns = %d", n, limits.MaxConns)
	}
	if before >= 0 {
		// 200 are the client's ends; the server's share is the rest.
		if grew := openDescriptors(t) - before - 200; grew > limits.MaxConns+4 {
			t.Errorf("the process's descriptors grew by %d beyond the clients' 200, want at most MaxConns = %d (and a few)", grew, limits.MaxConns)
		}
	}
	for _, c := range conns {
		c.Close()
	}
	conns = conns[:0]
	waitFor(t, "every connection closed on the server's side", func() bool { return counting.open.Load() == 0 })
}

// TestCapReleasedByTimeouts: 200 connections that never send anything are
// all closed by the server in the end, MaxConns at a time, and a request
// after them is answered.
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
		t.Errorf("%d accepted, want all 200 in turn", n)
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

// TestLimitListenerClose: closing a listener that is at its cap ends a
// waiting Accept.
func TestLimitListenerClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := httpserver.LimitListener(ln, 1)
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	first, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	accepted := make(chan error, 1)
	go func() {
		_, err := l.Accept()
		accepted <- err
	}()
	l.Close()
	select {
	case err := <-accepted:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
	case <-time.After(generous):
		t.Fatal("Accept still waits after Close")
	}
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
