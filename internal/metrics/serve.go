package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/tickscope/tickscope/internal/httpserver"
	"github.com/tickscope/tickscope/internal/options"
)

// ResolveAddr turns --listen's value into the address to bind: "PORT" and
// ":PORT" bind loopback (127.0.0.1); any other host must be an IP address
// or localhost, and public says it is not a loopback one (the caller
// warns). A malformed value is a usage error naming flag.
func ResolveAddr(flag, addr string) (bind string, public bool, err error) {
	host, port := "", addr
	if strings.Contains(addr, ":") {
		if host, port, err = net.SplitHostPort(addr); err != nil {
			return "", false, options.BadFlag(flag, addr, "want HOST:PORT, :PORT or PORT (HOST an IP address or localhost; IPv6 in brackets)")
		}
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", false, options.BadFlag(flag, addr, "the port must be a number 1..65535")
	}
	switch host {
	case "", "localhost":
		return net.JoinHostPort("127.0.0.1", port), false, nil
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", false, options.BadFlag(flag, addr, "the host must be an IP address or localhost (names are not resolved, so the address bound is the one written)")
	}
	return net.JoinHostPort(ip.String(), port), !ip.IsLoopback(), nil
}

// Listen binds --listen's address: a usage error for a malformed value,
// and an OS error (exit 1) naming the address when it cannot be bound (a
// port in use). warn is told when the address is not loopback.
func Listen(flag, addr string, warn func(string)) (net.Listener, error) {
	bind, public, err := ResolveAddr(flag, addr)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", bind)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) {
			err = op.Err
		}
		return nil, fmt.Errorf("listening on %s for --%s: %w", bind, flag, err)
	}
	if public && warn != nil {
		warn(fmt.Sprintf("--%s %s is not a loopback address: /metrics (read-only) is served to the network", flag, bind))
	}
	return l, nil
}

// Serve serves the registry on /metrics (GET and HEAD only) until stop is
// called, within httpserver's bounds. Nothing it serves changes anything.
func (m *Metrics) Serve(l net.Listener) (stop func()) { return m.serve(l, httpserver.Limits{}) }

func (m *Metrics) serve(l net.Listener, limits httpserver.Limits) (stop func()) {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry}))
	handler := http.Handler(mux)
	if addr, ok := l.Addr().(*net.TCPAddr); ok && addr.IP.IsLoopback() {
		handler = loopbackHostOnly(mux, addr.Port)
	}
	// net/http's own failures go nowhere: a scraper sees its own, and
	// standard error is the holder's or the watch's.
	srv := httpserver.New(handler, limits, log.New(io.Discard, "", 0))
	go srv.Serve(l)
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}
}

// loopbackHostOnly serves only requests whose Host names the loopback
// port served, as localhost or a loopback address. A page of another site
// that a browser on this machine has open can reach a loopback port under
// a name of its own that resolves to 127.0.0.1 (DNS rebinding); its
// requests carry that name as Host, and the metrics name the programs a
// --while hold watches. Served on another address, /metrics is the
// network's to read anyway, under whatever name its operator gave it, and
// no Host is refused. A refusal is a bare 403, as ui's are.
func loopbackHostOnly(next http.Handler, port int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, p, err := net.SplitHostPort(r.Host)
		ip := net.ParseIP(host)
		if err != nil || p != strconv.Itoa(port) || host != "localhost" && (ip == nil || !ip.IsLoopback()) {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Start is Listen and Serve for a command's --listen flag; an empty addr
// serves nothing (nil Metrics, whose methods do nothing, and a no-op stop).
func Start(flag, addr, version string, warn func(string)) (*Metrics, func(), error) {
	if addr == "" {
		return nil, func() {}, nil
	}
	l, err := Listen(flag, addr, warn)
	if err != nil {
		return nil, nil, err
	}
	m := New(version)
	return m, m.Serve(l), nil
}
