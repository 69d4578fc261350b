package metrics

import (
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/httpserver"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/timerstate"
)

func i32(v int32) *int32 { return &v }

func fed() *Metrics {
	m := New("1.2.3")
	yes := true
	m.SetState(timerstate.State{Current100ns: 10000, Finest100ns: 5000, Coarsest100ns: 156250, GlobalKeyInForce: &yes, Holder: &timerstate.Holder{}})
	m.SetState(timerstate.State{TickNs: 4e6, DMALatencyUs: i32(0), TimerSlackNs: 50_000})
	m.Changed("cpu_dma_latency")
	m.ObserveLateness("sleep", []int64{500, 80_000, 3_000_000, 200_000_000})
	m.SetHolder(timerinfo.Setting{Resolution100ns: 5000})
	m.Reapplied()
	return m
}

func TestGatheredMetrics(t *testing.T) {
	families, err := fed().Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.Metric {
			switch {
			case metric.Gauge != nil:
				got[f.GetName()] = metric.Gauge.GetValue()
			case metric.Counter != nil:
				got[f.GetName()] = metric.Counter.GetValue()
			case metric.Histogram != nil:
				h := metric.Histogram
				got[f.GetName()] = float64(h.GetSampleCount())
				if len(h.Bucket) != len(stats.LatenessBucketsNs) || h.Bucket[0].GetUpperBound() != 1e-6 || h.Bucket[len(h.Bucket)-1].GetUpperBound() != 0.1 {
					t.Errorf("classic buckets %v, want 1 µs .. 100 ms", h.Bucket)
				}
				if h.Schema == nil || len(h.PositiveSpan) == 0 {
					t.Errorf("%s has no native histogram (schema %v, spans %v)", f.GetName(), h.Schema, h.PositiveSpan)
				}
			}
		}
	}
	for name, want := range map[string]float64{
		"tickscope_timer_current_period_seconds":   0.004, // the later state, Linux's tick
		"tickscope_timer_finest_period_seconds":    0.0005,
		"tickscope_timer_coarsest_period_seconds":  0.015625,
		"tickscope_global_timer_requests_in_force": 1,
		"tickscope_cpu_dma_latency_seconds":        0,
		"tickscope_timer_slack_seconds":            50e-6,
		"tickscope_holder_running":                 1,
		"tickscope_holder_held_period_seconds":     0.0005,
		"tickscope_timer_state_changes_total":      1,
		"tickscope_holder_reapplies_total":         1,
		"tickscope_wake_lateness_seconds":          4,
		"tickscope_build_info":                     1,
	} {
		if v, ok := got[name]; !ok || v != want {
			t.Errorf("%s = %v (present %v), want %v", name, v, ok, want)
		}
	}
	if _, ok := got["tickscope_holder_held_cpu_dma_latency_seconds"]; ok {
		t.Error("a DMA latency the holder does not hold is exposed")
	}
}

// TestChangesByField: each changed field counts under its own label, so
// that period changes are field="current_period" alone.
func TestChangesByField(t *testing.T) {
	m := New("x")
	for _, field := range []string{"current_period", "startup_holder", "timer_slack", "current_period"} {
		m.Changed(field)
	}
	families, _ := m.Registry.Gather()
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "tickscope_timer_state_changes_total" {
			continue
		}
		for _, metric := range f.Metric {
			got[metric.Label[0].GetName()+"="+metric.Label[0].GetValue()] = metric.Counter.GetValue()
		}
	}
	want := map[string]float64{"field=current_period": 2, "field=startup_holder": 1, "field=timer_slack": 1}
	if len(got) != len(want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("changes{%s} = %v, want %v", k, got[k], v)
		}
	}
}

// TestWatchExportsWhatTheStartupHolderHolds: watch's state carries what
// the running startup holder holds; once it stops, the held gauge goes.
func TestWatchExportsWhatTheStartupHolderHolds(t *testing.T) {
	m := New("x")
	held := func() (float64, bool) {
		families, _ := m.Registry.Gather()
		for _, f := range families {
			if f.GetName() == "tickscope_holder_held_period_seconds" {
				return f.Metric[0].Gauge.GetValue(), true
			}
		}
		return 0, false
	}
	m.SetState(timerstate.State{Current100ns: 10000, Holder: &timerstate.Holder{Running: true, PID: 9, Held: &timerinfo.Setting{Resolution100ns: 10000}}})
	if v, ok := held(); !ok || v != 0.001 {
		t.Errorf("held period %v (present %v) while the holder runs, want 0.001", v, ok)
	}
	m.SetState(timerstate.State{Current100ns: 156250, Holder: &timerstate.Holder{}})
	if v, ok := held(); ok {
		t.Errorf("held period %v after the holder stopped, want absent", v)
	}
}

func TestUnsetGaugesAreAbsent(t *testing.T) {
	families, _ := New("x").Registry.Gather()
	for _, f := range families {
		if f.GetName() != "tickscope_build_info" && f.GetName() != "tickscope_holder_reapplies_total" {
			t.Errorf("%s is exposed before anything was read", f.GetName())
		}
	}
}

func TestResolveAddr(t *testing.T) {
	tests := []struct {
		addr, bind string
		public     bool
		bad        string
	}{
		{"9100", "127.0.0.1:9100", false, ""},
		{":9100", "127.0.0.1:9100", false, ""},
		{"localhost:9100", "127.0.0.1:9100", false, ""},
		{"127.0.0.2:9100", "127.0.0.2:9100", false, ""},
		{"[::1]:9100", "[::1]:9100", false, ""},
		{"0.0.0.0:9100", "0.0.0.0:9100", true, ""},
		{"192.168.1.5:80", "192.168.1.5:80", true, ""},
		{"example.com:9100", "", false, "the host must be an IP address or localhost"},
		{"9100x", "", false, "the port must be a number 1..65535"},
		{":0", "", false, "the port must be a number"},
		{":70000", "", false, "the port must be a number"},
		{"::1:9100", "", false, "want HOST:PORT"},
		{"a:b:c", "", false, "want HOST:PORT"},
	}
	for _, tt := range tests {
		bind, public, err := ResolveAddr("listen", tt.addr)
		var usage *options.UsageError
		switch {
		case tt.bad != "":
			if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.bad) || !strings.HasPrefix(err.Error(), "--listen ") {
				t.Errorf("%q: %v, want a usage error saying %q", tt.addr, err, tt.bad)
			}
		case err != nil || bind != tt.bind || public != tt.public:
			t.Errorf("%q: %q public %v (%v), want %q public %v", tt.addr, bind, public, err, tt.bind, tt.public)
		}
	}
}

func TestListenPortInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = Listen("listen", l.Addr().String(), nil)
	var usage *options.UsageError
	if err == nil || errors.As(err, &usage) || !strings.Contains(err.Error(), "address already in use") || strings.Contains(err.Error(), "\n") {
		t.Errorf("listening on a port in use: %v, want one line naming the address in use, not a usage error", err)
	}
}

// scrape serves m on a free loopback port and returns one GET /metrics,
// and the status of a POST.
func scrape(t *testing.T, m *Metrics) (body string, postStatus int) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := m.Serve(l)
	defer stop()
	url := "http://" + l.Addr().String() + "/metrics"
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	post, err := http.Post(url, "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	return string(data), post.StatusCode
}

func TestServeIsReadOnlyAndPassesPromtool(t *testing.T) {
	body, postStatus := scrape(t, fed())
	if postStatus != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %d, want 405", postStatus)
	}
	for _, want := range []string{`tickscope_wake_lateness_seconds_bucket{method="sleep",le="1e-06"} 1`, "tickscope_wake_lateness_seconds_count{method=\"sleep\"} 4", "tickscope_build_info{"} {
		if !strings.Contains(body, want) {
			t.Errorf("scrape lacks %q:\n%s", want, body)
		}
	}
	promtoolCheckMetrics(t, body)
}

// TestServeRefusesAnotherHost: on a loopback address /metrics answers
// only a Host that names that port as localhost or a loopback address, so
// that a page of another site (DNS rebinding) cannot read it.
func TestServeRefusesAnotherHost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := fed().Serve(l)
	defer stop()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	for host, want := range map[string]int{
		"127.0.0.1:" + port:  http.StatusOK,
		"localhost:" + port:  http.StatusOK,
		"127.0.0.2:" + port:  http.StatusOK,
		"evil.com:" + port:   http.StatusForbidden,
		"evil.com":           http.StatusForbidden,
		"127.0.0.1":          http.StatusForbidden,
		"127.0.0.1:1":        http.StatusForbidden,
		"10.0.0.1:" + port:   http.StatusForbidden,
		"localhost.:" + port: http.StatusForbidden,
	} {
		req, err := http.NewRequest("GET", "http://"+l.Addr().String()+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("Host %s: %v", host, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// requirePromtool finds promtool; the test skips without it unless
// TICKSCOPE_REQUIRE_PROMETHEUS=1, and then fails.
func requirePromtool(t *testing.T) string {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("TICKSCOPE_REQUIRE_PROMETHEUS") == "1" {
			t.Fatal("promtool not found and TICKSCOPE_REQUIRE_PROMETHEUS=1: install Debian's prometheus package")
		}
		t.Skip("promtool not found (Debian's prometheus package provides it)")
	}
	return promtool
}

// promtoolCheckMetrics runs promtool check metrics on a scrape.
func promtoolCheckMetrics(t *testing.T, body string) {
	t.Helper()
	cmd := exec.Command(requirePromtool(t), "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestOperatorsRulesAndConfig checks docs/prometheus/'s files with promtool:
// the recording rules and alerts, and the fleet's scrape configuration
// (which loads the rules).
func TestOperatorsRulesAndConfig(t *testing.T) {
	promtool := requirePromtool(t)
	dir := "../../docs/prometheus"
	for _, args := range [][]string{
		{"check", "rules", dir + "/tickscope-rules.yml"},
		{"check", "config", dir + "/prometheus-fleet.yml"},
		// Two targets on one machine (watch and apply --listen) join and
		// alert per machine.
		{"test", "rules", "testdata/rules_test.yml"},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "SUCCESS") {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	out, _ := exec.Command(promtool, "check", "rules", dir+"/tickscope-rules.yml").CombinedOutput()
	if !strings.Contains(string(out), "SUCCESS: 5 rules found") {
		t.Errorf("want 3 recording rules and 2 alerts:\n%s", out)
	}
}

// FuzzResolveAddr: any --listen value is a one-line usage error naming the
// flag, or an address of an IP and a port 1..65535 that is public exactly
// when it is not loopback.
func FuzzResolveAddr(f *testing.F) {
	for _, seed := range []string{"9100", ":9100", "localhost:1", "[::1]:9100", "0.0.0.0:80", "a:b:c", "", "[fe80::1%eth0]:1", ":65536", "1.2.3.4:0009"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		bind, public, err := ResolveAddr("listen", addr)
		if err != nil {
			var usage *options.UsageError
			if !errors.As(err, &usage) || strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "--listen ") {
				t.Fatalf("%q: %v is not a one-line usage error naming --listen", addr, err)
			}
			return
		}
		host, port, err := net.SplitHostPort(bind)
		if err != nil {
			t.Fatalf("%q: bind %q: %v", addr, bind, err)
		}
		ip := net.ParseIP(host)
		n, perr := strconv.Atoi(port)
		if ip == nil || perr != nil || n < 1 || n > 65535 || public == ip.IsLoopback() {
			t.Fatalf("%q: bind %q public %v", addr, bind, public)
		}
	})
}

// TestIdleConnectionsClosed: /metrics is served within httpserver's
// bounds: a connection that sends nothing, and one kept alive after a
// scrape or a refused POST, is closed by the server (bounds shortened for
// the test; httpserver's own tests cover the connection cap).
func TestIdleConnectionsClosed(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := fed().serve(l, httpserver.Limits{ReadHeader: 200 * time.Millisecond, Idle: 200 * time.Millisecond})
	defer stop()
	for _, send := range []string{
		"",
		"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx",
		"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		c, err := net.Dial("tcp", l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, send)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		_, err = io.Copy(io.Discard, c)
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			t.Errorf("%q: the connection is still open after 30 s", send)
		}
		c.Close()
	}
}

// gauges gathers the gauges, each by name and its labels' values.
func gauges(m *Metrics) map[string]float64 {
	families, _ := m.Registry.Gather()
	got := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.Metric {
			if metric.Gauge == nil {
				continue
			}
			name := f.GetName()
			for _, l := range metric.Label {
				name += "{" + l.GetValue() + "}"
			}
			got[name] = metric.Gauge.GetValue()
		}
	}
	return got
}

// TestHolderWhile: a holder with --while exports whether it holds and its
// programs' processes, and what it holds only while it holds: apply's,
// and watch's startup holder.
func TestHolderWhile(t *testing.T) {
	m := New("x")
	setting := timerinfo.Setting{Resolution100ns: 10000}
	m.HolderWhile(timerstate.WhileState{Programs: []string{"game.exe", "other.exe"}}, setting)
	got := gauges(m)
	if got["tickscope_holder_holding"] != 0 || got["tickscope_holder_while_processes{game.exe}"] != 0 || got["tickscope_holder_running"] != 1 {
		t.Errorf("waiting: %v", got)
	}
	if _, ok := got["tickscope_holder_held_period_seconds"]; ok {
		t.Errorf("waiting, a held period is exposed: %v", got)
	}
	m.HolderWhile(timerstate.WhileState{Programs: []string{"game.exe", "other.exe"}, Holding: true,
		Running: []timerstate.ProgramRunning{{Program: "game.exe", PID: 1}, {Program: "game.exe", PID: 2}}}, setting)
	got = gauges(m)
	if got["tickscope_holder_holding"] != 1 || got["tickscope_holder_while_processes{game.exe}"] != 2 || got["tickscope_holder_while_processes{other.exe}"] != 0 ||
		got["tickscope_holder_held_period_seconds"] != 0.001 {
		t.Errorf("holding: %v", got)
	}
	m = New("x")
	m.SetState(timerstate.State{Holder: &timerstate.Holder{Running: true, PID: 9, Held: &setting, While: []string{"game.exe"}}})
	got = gauges(m)
	if _, ok := got["tickscope_holder_held_period_seconds"]; ok || got["tickscope_holder_holding"] != 0 || got["tickscope_holder_while_processes{game.exe}"] != 0 {
		t.Errorf("watch, the startup holder waiting: %v", got)
	}
	m.SetState(timerstate.State{Holder: &timerstate.Holder{Running: true, PID: 9, Held: &setting, While: []string{"game.exe"},
		HoldingFor: []timerstate.ProgramRunning{{Program: "game.exe", PID: 4242}}}})
	got = gauges(m)
	if got["tickscope_holder_held_period_seconds"] != 0.001 || got["tickscope_holder_holding"] != 1 || got["tickscope_holder_while_processes{game.exe}"] != 1 {
		t.Errorf("watch, the startup holder holding: %v", got)
	}
}
