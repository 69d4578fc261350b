package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// The testscript commands and condition for a real Prometheus (Debian's
// prometheus package, which has promtool): [prometheus] is true where
// both binaries are found, and an error where they are missing while
// TICKSCOPE_REQUIRE_PROMETHEUS=1 (CI).
func init() {
	scriptCommands["freeport"] = freeport
	scriptCommands["promtool-metrics"] = promtoolMetrics
	scriptCommands["prometheus-scrapes"] = prometheusScrapes
}

func prometheusCondition() (bool, error) {
	for _, bin := range []string{"prometheus", "promtool"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("TICKSCOPE_REQUIRE_PROMETHEUS") == "1" {
				return false, fmt.Errorf("%s not found and TICKSCOPE_REQUIRE_PROMETHEUS=1: install Debian's prometheus package", bin)
			}
			return false, nil
		}
	}
	return true, nil
}

// freeport VAR: VAR is a loopback port free a moment ago.
func freeport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	l.Close()
}

// scrapeWhenUp GETs http://127.0.0.1:PORT/metrics, retrying for 10 s
// while the server starts.
func scrapeWhenUp(ts *testscript.TestScript, port string) string {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://127.0.0.1:" + port + "/metrics")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), "tickscope_timer_current_period_seconds") {
				return string(body)
			}
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no state on http://127.0.0.1:%s/metrics after 10 s: %v", port, err)
		}
	}
}

// promtool-metrics PORT: a scrape of tickscope on PORT passes promtool
// check metrics with nothing to say, and the scrape is left in the file
// scrape.txt.
func promtoolMetrics(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: promtool-metrics PORT")
	}
	body := scrapeWhenUp(ts, args[0])
	ts.Check(os.WriteFile(ts.MkAbs("scrape.txt"), []byte(body), 0o644))
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		ts.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

// prometheus-scrapes PORT: a real Prometheus, started here on a free
// loopback port with a generated configuration scraping tickscope on PORT
// every second, stores tickscope_ series with sane values, and the
// lateness histogram's count grows between two queries. A second server
// beside it, with native histograms enabled (Prometheus 2.42 then ingests
// the native histogram in place of the classic buckets), stores the
// native one.
func prometheusScrapes(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: prometheus-scrapes PORT")
	}
	ctx, cancel := context.WithCancel(context.Background())
	// One deferred function, cancelling before waiting: Fatalf panics, and a
	// wait on a Prometheus not yet killed would block to the go test timeout
	// and lose the message.
	var servers []*prometheusServer
	defer func() {
		cancel()
		for _, p := range servers {
			p.wait()
		}
	}()
	classic := startPrometheus(ctx, ts, "classic", args[0])
	servers = append(servers, classic)
	native := startPrometheus(ctx, ts, "native", args[0], "--enable-feature=native-histograms")
	servers = append(servers, native)

	up := classic.waitFor(`up{job="tickscope"}`, func(v float64) bool { return v == 1 }, 20*time.Second)
	period := classic.waitFor("tickscope_timer_current_period_seconds", func(v float64) bool { return v > 0 && v <= 0.0157 }, 5*time.Second)
	info := classic.waitFor("tickscope_build_info", func(v float64) bool { return v == 1 }, 5*time.Second)
	first := classic.waitFor("sum(tickscope_wake_lateness_seconds_count)", func(v float64) bool { return v > 0 }, 10*time.Second)
	later := classic.waitFor("sum(tickscope_wake_lateness_seconds_count)", func(v float64) bool { return v > first }, 10*time.Second)
	p99 := classic.waitFor(`histogram_quantile(0.99, sum by (le) (tickscope_wake_lateness_seconds_bucket))`, func(v float64) bool { return v > 0 && v <= 0.1 }, 5*time.Second)
	nativeCount := native.waitFor("sum(histogram_count(tickscope_wake_lateness_seconds))", func(v float64) bool { return v > 0 }, 10*time.Second)
	nativeP99 := native.waitFor("histogram_quantile(0.99, sum(tickscope_wake_lateness_seconds))", func(v float64) bool { return v > 0 && v <= 0.2 }, 5*time.Second)
	ts.Logf("up %v, current period %v s, build info %v, lateness count %v then %v, p99 %v s; native: count %v, p99 %v s", up, period, info, first, later, p99, nativeCount, nativeP99)
	fmt.Fprintf(ts.Stdout(), "prometheus stored tickscope: period %v s, lateness count %v -> %v, native histogram count %v\n", period, first, later, nativeCount)
}

// prometheusServer is a Prometheus process the test started.
type prometheusServer struct {
	ts   *testscript.TestScript
	web  string // its HTTP address
	dir  string
	cmd  *exec.Cmd
	logs *os.File
}

// startPrometheus starts Prometheus in $WORK/prometheus-NAME, scraping
// tickscope on port every second, with extra flags.
func startPrometheus(ctx context.Context, ts *testscript.TestScript, name, port string, extra ...string) *prometheusServer {
	dir := ts.MkAbs("prometheus-" + name)
	ts.Check(os.MkdirAll(filepath.Join(dir, "data"), 0o755))
	config := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: tickscope\n    static_configs:\n      - targets: [\"127.0.0.1:%s\"]\n", port)
	ts.Check(os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	p := &prometheusServer{ts: ts, web: l.Addr().String(), dir: dir}
	l.Close()
	args := append([]string{"--config.file=" + filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path=" + filepath.Join(dir, "data"), "--web.listen-address=" + p.web, "--log.level=warn"}, extra...)
	p.cmd = exec.CommandContext(ctx, "prometheus", args...)
	p.logs, err = os.Create(filepath.Join(dir, "prometheus.log"))
	ts.Check(err)
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	ts.Check(p.cmd.Start())
	return p
}

func (p *prometheusServer) wait() {
	p.cmd.Wait()
	p.logs.Close()
}

// query asks the HTTP query API for expr's first value.
func (p *prometheusServer) query(expr string) (float64, bool) {
	resp, err := http.Get("http://" + p.web + "/api/v1/query?query=" + url.QueryEscape(expr))
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var answer struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if json.NewDecoder(resp.Body).Decode(&answer) != nil || answer.Status != "success" || len(answer.Data.Result) == 0 {
		return 0, false
	}
	text, _ := answer.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(text, 64)
	return v, err == nil
}

// waitFor queries expr until ok accepts its value, failing the script
// (with the server's log) after within.
func (p *prometheusServer) waitFor(expr string, ok func(float64) bool, within time.Duration) float64 {
	deadline := time.Now().Add(within)
	for {
		if v, found := p.query(expr); found && ok(v) {
			return v
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(p.dir, "prometheus.log"))
			p.ts.Fatalf("Prometheus (%s): no acceptable %s within %v\n%s", filepath.Base(p.dir), expr, within, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
