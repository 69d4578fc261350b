package ui

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/httpserver"
	"github.com/tickscope/tickscope/internal/sim"
)

// runUI runs Run on the model within limits and returns the page's address;
// quitting is the test's cleanup.
func runUI(t *testing.T, limits httpserver.Limits) string {
	t.Helper()
	var stdout syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Host: mustModel(t), Shell: &sim.Shell{}, Scenario: "narrow-band", Seed: 1, NoBrowser: true, Stdout: &stdout, Stderr: io.Discard, Limits: limits})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, after, ok := strings.Cut(stdout.String(), "tickscope ui: "); ok {
			url, _, _ := strings.Cut(after, "\n")
			return url
		}
	}
	t.Fatalf("Run printed no address: %q", stdout.String())
	return ""
}

// TestRunClosesIdleConnections: ui's server is httpserver's: a connection
// that sends nothing, or stays open after an answer (a 403 without the
// token, the page with it), is closed; the event stream outlives the
// write bound, one write at a time.
func TestRunClosesIdleConnections(t *testing.T) {
	limits := httpserver.Limits{ReadHeader: 200 * time.Millisecond, Idle: 200 * time.Millisecond, Write: 300 * time.Millisecond}
	url := runUI(t, limits)
	hostPort := strings.TrimPrefix(url, "http://")
	hostPort, path, _ := strings.Cut(hostPort, "/")
	for _, send := range []string{
		"",
		"GET / HTTP/1.1\r\nHost: " + hostPort + "\r\n\r\n",
		"GET /" + path + " HTTP/1.1\r\nHost: " + hostPort + "\r\n\r\n",
		"GET /" + path + " HTTP/1.1\r\nHost: " + hostPort + "\r\nX-Slow: ",
	} {
		c, err := net.Dial("tcp", hostPort)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, send)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.Copy(io.Discard, c)
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			t.Errorf("%q: the connection is still open after 30 s", strings.ReplaceAll(send, path, "TOKEN/"))
		}
		c.Close()
	}
	// One event a second: three take longer than the write bound.
	resp, err := http.Get(url + "events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := 0
	for sc := bufio.NewScanner(resp.Body); events < 3 && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "data: {") {
			events++
		}
	}
	if events != 3 {
		t.Errorf("the event stream ended after %d events (write bound %v)", events, limits.Write)
	}
}
