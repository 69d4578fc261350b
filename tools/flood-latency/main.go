// Command flood-latency measures how long the owner's request to a
// tickscope HTTP server takes while another process floods it with idle
// connections: a child process (this program with -flood)
// opens -conns connections that send nothing and reopens each one the
// server closes; once all are connected, the parent sends -requests GETs,
// each on a new connection written at once (as curl or a scraper does),
// 200 ms apart, each with -timeout to be answered, and prints their
// median and maximum and how many were not answered in time.
//
// Without -addr it serves, in this process, one after the other for each
// flood: main's server before this change ("main": http.Server with
// main's timeouts behind a limit listener of 32, copied below) and
// httpserver.New with its Defaults ("httpserver"), both answering 200.
// -maxconns sets httpserver's table (as a low `ulimit -n` would).
// With -addr it floods that server (a `tickscope watch --listen` run under
// a low `ulimit -n`, say) and requests -path.
//
//	go run ./tools/flood-latency [-conns 300,1000] [-requests 5] [-timeout 10s]
//	go run ./tools/flood-latency -addr 127.0.0.1:9938 -path /metrics
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tickscope/tickscope/internal/httpserver"
)

func main() {
	conns := flag.String("conns", "0,300,1000", "the floods' sizes, comma-separated")
	requests := flag.Int("requests", 5, "the owner's requests per flood")
	timeout := flag.Duration("timeout", 10*time.Second, "how long a request may take")
	addr := flag.String("addr", "", "flood this server instead of serving in this process")
	path := flag.String("path", "/", "the path the owner requests")
	maxConns := flag.Int("maxconns", 0, "httpserver's MaxConns (0: its default)")
	builds := flag.String("builds", "main,httpserver", "the servers served in this process")
	floodAddr := flag.String("flood", "", "(child) flood this address")
	floodN := flag.Int("n", 0, "(child) with -flood, how many connections")
	flag.Parse()
	if *floodAddr != "" {
		flood(*floodAddr, *floodN)
		return
	}
	var sizes []int
	for _, f := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			fmt.Fprintf(os.Stderr, "flood-latency: -conns %q\n", *conns)
			os.Exit(2)
		}
		sizes = append(sizes, n)
	}
	fmt.Printf("| server | flood | answered | median | max |\n| --- | --- | --- | --- | --- |\n")
	for _, n := range sizes {
		if *addr != "" {
			row(*addr, *addr, *path, n, *requests, *timeout)
			continue
		}
		for _, build := range strings.Split(*builds, ",") {
			a, stop := serve(build, *maxConns)
			row(build, a, *path, n, *requests, *timeout)
			stop()
		}
	}
}

// row floods addr with n connections from a child process and prints the
// owner's requests' figures.
func row(name, addr, path string, n, requests int, timeout time.Duration) {
	var child *exec.Cmd
	if n > 0 {
		exe, err := os.Executable()
		if err != nil {
			fail(err)
		}
		child = exec.Command(exe, "-flood", addr, "-n", strconv.Itoa(n))
		child.Stderr = os.Stderr
		out, err := child.StdoutPipe()
		if err != nil {
			fail(err)
		}
		if err := child.Start(); err != nil {
			fail(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		if err != nil || line != "ready\n" {
			fail(fmt.Errorf("the flood: %q, %v", line, err))
		}
		time.Sleep(time.Second) // the flood in its steady state
	}
	var took []time.Duration
	failed := 0
	for i := range requests {
		if i > 0 {
			time.Sleep(200 * time.Millisecond)
		}
		d, err := get(addr, path, timeout)
		if err != nil {
			failed++
			d = timeout
		}
		took = append(took, d)
	}
	if child != nil {
		child.Process.Kill()
		child.Wait()
	}
	slices.Sort(took)
	ms := func(d time.Duration) string {
		if d >= timeout {
			return fmt.Sprintf("over %v", timeout)
		}
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	}
	fmt.Printf("| %s | %d | %d of %d within %v | %s | %s |\n", name, n, requests-failed, requests, timeout, ms(took[len(took)/2]), ms(took[len(took)-1]))
}

// get is one GET on a new connection, written as soon as it is connected.
func get(addr, path string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	c.SetDeadline(start.Add(timeout))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, addr); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("status %d", resp.StatusCode)
	}
	return time.Since(start), nil
}

// flood holds n connections to addr that send nothing, reopening each one
// the server closes, and prints "ready" once all n are connected; it runs
// until killed (or 10 minutes).
func flood(addr string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var ready sync.WaitGroup
	ready.Add(n)
	for range n {
		go func() {
			var d net.Dialer
			for first := true; ctx.Err() == nil; first = false {
				c, err := d.DialContext(ctx, "tcp", addr)
				if first {
					ready.Done()
				}
				if err != nil {
					time.Sleep(10 * time.Millisecond)
					continue
				}
				io.Copy(io.Discard, c) // until the server closes it
				c.Close()
			}
		}()
	}
	ready.Wait()
	fmt.Println("ready")
	<-ctx.Done()
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })

// serve serves ok on a loopback port with build's server.
func serve(build string, maxConns int) (addr string, stop func()) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	switch build {
	case "main":
		srv := &http.Server{Handler: ok, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
			WriteTimeout: 30 * time.Second, IdleTimeout: 30 * time.Second, MaxHeaderBytes: 16 << 10}
		go srv.Serve(mainLimitListener(ln, 32))
		return ln.Addr().String(), func() { srv.Close() }
	default:
		srv := httpserver.New(ok, httpserver.Limits{MaxConns: maxConns}, nil)
		go srv.Serve(ln)
		return ln.Addr().String(), func() { srv.Close() }
	}
}

// mainLimitListener is main's httpserver.LimitListener before this change
// (commit 3ca89bb): Accept waits, without accepting, until one of the n
// connections open is closed.
func mainLimitListener(l net.Listener, n int) net.Listener {
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

type limitConn struct {
	net.Conn
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}

func fail(err error) {
	if !errors.Is(err, net.ErrClosed) {
		fmt.Fprintln(os.Stderr, "flood-latency:", err)
	}
	os.Exit(1)
}
