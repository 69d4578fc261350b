package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/seam"
	"github.com/tickscope/tickscope/internal/sim"
)

// newTestServer serves the page on the model in a scenario, on a loopback
// port, as Run does.
func newTestServer(t *testing.T, scenario string) (*Server, *httptest.Server) {
	t.Helper()
	model, err := sim.NewHost(scenario, 1)
	if err != nil {
		t.Fatal(err)
	}
	return newTestServerOn(t, model, scenario)
}

// newTestServerOn is newTestServer on a host of the test's, the model of
// scenario or one that wraps it.
func newTestServerOn(t *testing.T, model seam.Host, scenario string) (*Server, *httptest.Server) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Host: model, Shell: &sim.Shell{}, Scenario: scenario, Seed: 1, Stdout: io.Discard, Stderr: io.Discard}, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(s)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(func() { s.Close(); srv.Close() })
	return s, srv
}

// request sends one request as a browser would, with the page's Origin on
// actions unless origin says otherwise.
func request(t *testing.T, s *Server, method, path, host, origin, contentType, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	client := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// paths are every address the page has, after /TOKEN/.
var paths = []struct {
	method, path string
}{
	{"GET", ""}, {"GET", "app.js"}, {"GET", "style.css"}, {"GET", "chart.css"}, {"GET", "favicon.ico"}, {"GET", "events"}, {"GET", "result?job=1"},
	{"GET", "nonexistent"}, {"POST", "api/measure"}, {"POST", "api/bench"}, {"POST", "api/hold"}, {"POST", "api/release"},
	{"POST", "api/persist"}, {"POST", "api/remove"}, {"POST", "api/global"}, {"POST", "api/elevate"}, {"POST", "api/stop"},
}

// TestNoTokenNoAnswer: without the token, or with a wrong one, every path
// is 403, static files and the event stream included, and no action runs.
func TestNoTokenNoAnswer(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	wrong := []byte(s.token)
	wrong[len(wrong)-1] ^= 1
	prefixes := map[string]string{
		"no token":          "/",
		"wrong token":       "/" + string(wrong) + "/",
		"token prefix":      "/" + s.token[:len(s.token)-1] + "/",
		"token and more":    "/" + s.token + "x/",
		"token in the path": "/x/" + s.token + "/",
		"empty segment":     "//",
	}
	for name, prefix := range prefixes {
		for _, p := range paths {
			resp := request(t, s, p.method, prefix+p.path, s.addr, s.origin, "application/json", "{}")
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("%s: %s %s: %d, want 403", name, p.method, prefix+p.path, resp.StatusCode)
			}
			body, _ := io.ReadAll(resp.Body)
			if strings.Contains(string(body), s.token) {
				t.Errorf("%s: %s %s: the answer carries the token", name, p.method, prefix+p.path)
			}
		}
	}
	// The token without the slash after it is refused too (every address
	// of the page is under /TOKEN/).
	if resp := request(t, s, "GET", "/"+s.token, s.addr, "", "", ""); resp.StatusCode != http.StatusForbidden {
		t.Errorf("GET /TOKEN: %d, want 403", resp.StatusCode)
	}
	if s.jobs != 0 || s.held != nil {
		t.Errorf("an action ran without the token: %d jobs, held %v", s.jobs, s.held)
	}
	// And with it, the page and its files answer.
	for _, p := range []string{"", "app.js", "style.css", "chart.css", "favicon.ico"} {
		if resp := request(t, s, "GET", "/"+s.token+"/"+p, s.addr, "", "", ""); resp.StatusCode != http.StatusOK {
			t.Errorf("GET /TOKEN/%s with the token: %d, want 200", p, resp.StatusCode)
		}
	}
}

// TestHostMustBeTheLoopbackAddress: a request naming another host (a DNS
// rebinding attack's, or localhost) is 403 even with the token.
func TestHostMustBeTheLoopbackAddress(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	_, port, _ := net.SplitHostPort(s.addr)
	for _, host := range []string{"evil.example:" + port, "localhost:" + port, "127.0.0.1", "127.0.0.1:1", "[::1]:" + port, "127.0.0.2:" + port} {
		for _, p := range paths {
			resp := request(t, s, p.method, "/"+s.token+"/"+p.path, host, s.origin, "application/json", "{}")
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("Host %q: %s %s: %d, want 403", host, p.method, p.path, resp.StatusCode)
			}
		}
	}
	if s.jobs != 0 {
		t.Errorf("an action ran for a foreign Host")
	}
}

// TestActionsNeedThePagesOrigin: an action with another Origin, none, or
// "null" is 403 and does nothing; a GET of an action is 405; a form post
// (which a foreign page can send without a preflight) is refused.
func TestActionsNeedThePagesOrigin(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	base := "/" + s.token + "/api/"
	for _, origin := range []string{"http://evil.example", "null", "http://localhost:" + strings.Split(s.addr, ":")[1], "https://" + s.addr, s.origin + "/", ""} {
		for _, action := range []string{"measure", "bench", "hold", "persist", "remove", "global", "elevate", "release", "stop"} {
			resp := request(t, s, "POST", base+action, s.addr, origin, "application/json", `{}`)
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("Origin %q: POST %s: %d, want 403", origin, action, resp.StatusCode)
			}
		}
	}
	for _, action := range []string{"measure", "hold", "global"} {
		resp := request(t, s, "GET", base+action, s.addr, s.origin, "", "")
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("GET %s: %d (Allow %q), want 405 (Allow POST)", action, resp.StatusCode, resp.Header.Get("Allow"))
		}
		for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x"} {
			resp := request(t, s, "POST", base+action, s.addr, s.origin, ct, `{}`)
			if resp.StatusCode != http.StatusUnsupportedMediaType {
				t.Errorf("POST %s as %s: %d, want 415", action, ct, resp.StatusCode)
			}
		}
	}
	if s.jobs != 0 || s.held != nil {
		t.Errorf("a refused action ran: %d jobs, held %v", s.jobs, s.held)
	}
	// The page's own Origin is let through.
	resp := request(t, s, "POST", base+"measure", s.addr, s.origin, "application/json", `{"samples":5}`)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST measure from the page: %d, want 200", resp.StatusCode)
	}
}

// TestHeaders: every answer forbids framing, sniffing, referrers and
// anything loaded from elsewhere.
func TestHeaders(t *testing.T) {
	s, _ := newTestServer(t, "narrow-band")
	for _, path := range []string{"/", "/" + s.token + "/", "/" + s.token + "/app.js"} {
		resp := request(t, s, "GET", path, s.addr, "", "", "")
		for k, v := range securityHeaders {
			if got := resp.Header.Get(k); got != v {
				t.Errorf("%s: %s = %q, want %q", path, k, got, v)
			}
		}
	}
}

// TestTokens: each run's token is new, 256 bits, and URL-safe.
func TestTokens(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		s, err := New(Options{Host: mustModel(t), Scenario: "narrow-band"}, "127.0.0.1:1")
		if err != nil {
			t.Fatal(err)
		}
		if len(s.token) != 43 || strings.ContainsAny(s.token, "+/=") || seen[s.token] {
			t.Fatalf("token %q: want 43 URL-safe characters, new each time", s.token)
		}
		seen[s.token] = true
		s.Close()
	}
}

func mustModel(t *testing.T) *sim.Host {
	model, err := sim.NewHost("narrow-band", 1)
	if err != nil {
		t.Fatal(err)
	}
	return model
}

// syncBuffer is a buffer two goroutines may use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestRunPrintsTheTokenOnce: Run serves on 127.0.0.1 and prints the
// address with the token once, on standard output; through a session of
// requests, refused ones included, the token is written nowhere else; and
// the browser is asked to open that address unless --no-browser.
func TestRunPrintsTheTokenOnce(t *testing.T) {
	for _, noBrowser := range []bool{false, true} {
		var stdout, stderr syncBuffer
		shell := &sim.Shell{}
		state := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, Options{Host: mustModel(t), System: &sim.System{State: state}, Shell: shell, Scenario: "narrow-band", Seed: 1, NoBrowser: noBrowser, Stdout: &stdout, Stderr: &stderr})
		}()
		var url string
		for deadline := time.Now().Add(10 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, after, ok := strings.Cut(stdout.String(), "tickscope ui: "); ok {
				url, _, _ = strings.Cut(after, "\n")
			}
		}
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("printed %q, want an address on 127.0.0.1", stdout.String())
		}
		token := strings.Trim(url[strings.LastIndex(strings.TrimSuffix(url, "/"), "/"):], "/")
		origin := strings.TrimSuffix(url, token+"/")
		origin = strings.TrimSuffix(origin, "/")
		// The browser is given a launcher file in the user's state
		// directory, readable by this user only, that sends it on: no
		// token on any command line, nothing in the temporary directory.
		opened, _ := shell.Calls()
		var launcher string
		if !noBrowser {
			if len(opened) != 1 || strings.Contains(opened[0], token) {
				t.Fatalf("the browser was asked to open %q", opened)
			}
			launcher = opened[0]
			if filepath.Dir(launcher) != state {
				t.Errorf("the launcher %s is not in the state directory %s", launcher, state)
			}
			page, err := os.ReadFile(launcher)
			if err != nil || !strings.Contains(string(page), `http-equiv="refresh" content="0;url=`+url+`"`) {
				t.Fatalf("the launcher %s holds %q (%v)", launcher, page, err)
			}
			for path, want := range map[string]os.FileMode{launcher: 0o600} {
				if fi, err := os.Stat(path); err != nil || fi.Mode() != want {
					t.Errorf("%s: %v %v, want %v", path, fi.Mode(), err, want)
				}
			}
		} else if len(opened) != 0 {
			t.Errorf("--no-browser: the browser was asked to open %q", opened)
		}
		for _, r := range []struct {
			method, url, origin string
			status              int
			body                string
		}{
			{"GET", url, "", 200, ""}, {"GET", url + "nope", "", 404, ""}, {"GET", url + "events", "", 200, ""},
			{"POST", url + "api/measure", origin, 200, `{"samples":5}`}, {"POST", url + "api/measure", "http://evil.example", 403, `{"samples":5}`},
			{"POST", url + "api/hold", origin, 400, `{"samples":5}`}, {"POST", url + "api/release", origin, 400, `{"samples":5}`},
			{"POST", url + "api/release", origin, 200, `{}`},
		} {
			req, _ := http.NewRequest(r.method, r.url, strings.NewReader(r.body))
			req.Header.Set("Content-Type", "application/json")
			if r.origin != "" {
				req.Header.Set("Origin", r.origin)
			}
			ctx, stop := context.WithTimeout(context.Background(), 2*time.Second)
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatalf("%s %s: %v", r.method, r.url, err)
			}
			if resp.StatusCode != r.status {
				t.Errorf("%s %s (Origin %q): %d, want %d", r.method, r.url, r.origin, resp.StatusCode, r.status)
			}
			if r.url == url+"events" {
				if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || !strings.HasPrefix(line, "data: {") {
					t.Errorf("events: %q %v", line, err)
				}
				if _, err := os.Stat(launcher); launcher != "" && !os.IsNotExist(err) {
					t.Errorf("the launcher %s is still there once the page has loaded (%v)", launcher, err)
				}
			}
			resp.Body.Close()
			stop()
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(stdout.String(), token); n != 1 {
			t.Errorf("the token is on standard output %d times, want once:\n%s", n, stdout.String())
		}
		if strings.Contains(stderr.String(), token) {
			t.Errorf("the token is on standard error:\n%s", stderr.String())
		}
		if _, err := os.Stat(launcher); launcher != "" && !os.IsNotExist(err) {
			t.Errorf("the launcher is still there after quitting (%v)", err)
		}
	}
}

// TestRedacting: what the HTTP server logs has the token taken out.
func TestRedacting(t *testing.T) {
	var b bytes.Buffer
	r := redacting{w: &b, secret: "s3cret"}
	if n, err := r.Write([]byte("GET /s3cret/events failed")); err != nil || n != 25 {
		t.Fatal(n, err)
	}
	if b.String() != "GET /[token]/events failed" {
		t.Errorf("logged %q", b.String())
	}
}

// post runs an action from the page and decodes its outcome.
func post(t *testing.T, s *Server, action, body string) *Outcome {
	t.Helper()
	resp := request(t, s, "POST", "/"+s.token+"/api/"+action, s.addr, s.origin, "application/json", body)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("%s: %d %s", action, resp.StatusCode, b)
	}
	var out Outcome
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return &out
}
