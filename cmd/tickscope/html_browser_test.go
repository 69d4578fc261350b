package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/tickscope/tickscope/internal/testlock"
)

// htmlPages are the report types the browser test draws: each command's
// arguments (the --html path is appended) and how many charts it has.
var htmlPages = []struct {
	name   string
	args   []string
	charts int
	linux  bool // a real Linux measurement
	// dma marks a real measurement that, as root on Linux, holds
	// /dev/cpu_dma_latency (compare's dma-0 column, the bench's second
	// sweep): it takes the lock the tests that read the device take.
	dma bool
}{
	{"bench-windows", []string{"bench", "--simulate", "narrow-band", "--samples", "40"}, 1, false, false},
	{"measure", []string{"measure", "--simulate", "narrow-band", "--samples", "3000"}, 2, false, false},
	{"curve", []string{"curve", "--simulate", "narrow-band", "--to", "40ms"}, 1, false, false},
	{"compare", []string{"compare", "--cycles", "20"}, 1, false, true},
	{"bench-linux", []string{"bench", "--samples", "20"}, 1, true, true},
	// Every wait is later than 1 ns: the aggregate and ten worst waits.
	{"explain", []string{"explain", "--samples", "200", "--over", "1ns", "--layer", "0"}, 2, true, false},
}

// writePage runs tickscope in this process and returns the page it wrote.
func writePage(t *testing.T, dir string, name string, args []string) string {
	t.Helper()
	path := filepath.Join(dir, name+".html")
	var stderr bytes.Buffer
	a := &app{stdout: io.Discard, stderr: &stderr}
	if rc := a.execute(append(args, "--html", path)); rc != 0 {
		t.Fatalf("tickscope %s: exit %d: %s", strings.Join(args, " "), rc, stderr.String())
	}
	return path
}

// TestHTMLSelfContained checks what the page must not carry, without a
// browser: no script, no font, no http(s) reference; SVG and tables.
func TestHTMLSelfContained(t *testing.T) {
	dir := t.TempDir()
	for _, p := range htmlPages {
		if p.linux {
			continue // the browser test covers it, under the DMA lock
		}
		data, err := os.ReadFile(writePage(t, dir, p.name, p.args))
		if err != nil {
			t.Fatal(err)
		}
		page := strings.ToLower(string(data))
		for _, bad := range []string{"http:", "https:", "<script", "@font-face", "url(", "<link", "<img"} {
			if strings.Contains(page, bad) {
				t.Errorf("%s: the page contains %q", p.name, bad)
			}
		}
		if n := strings.Count(page, `<svg class="chart"`); n != p.charts {
			t.Errorf("%s: %d charts, want %d", p.name, n, p.charts)
		}
		if n := strings.Count(page, `<table class="num"`); n < p.charts {
			t.Errorf("%s: %d numbers tables for %d charts", p.name, n, p.charts)
		}
		if p.args[1] == "--simulate" && !strings.Contains(page, `<div class="sim">simulated`) {
			t.Errorf("%s: a page of the model does not say SIMULATED", p.name)
		}
	}
}

// chromium finds Debian's chromium; without it the test skips saying why,
// unless TICKSCOPE_REQUIRE_BROWSER=1 (CI, which installs it) makes that a
// failure.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	msg := "no chromium on PATH (apt-get install chromium) to render the HTML reports"
	if os.Getenv("TICKSCOPE_REQUIRE_BROWSER") == "1" {
		t.Fatalf("%s (TICKSCOPE_REQUIRE_BROWSER=1)", msg)
	}
	t.Skip(msg)
	return ""
}

// TestHTMLInBrowser loads each report type in headless Chromium: no console
// error, no network request, the charts and the numbers tables present, and
// each chart's box drawn (enough coloured pixels: the axes and text are
// grey, the data is not).
func TestHTMLInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	dir := t.TempDir()
	shots := os.Getenv("TICKSCOPE_SCREENSHOT_DIR") // to look at them
	for _, p := range htmlPages {
		t.Run(p.name, func(t *testing.T) {
			if p.linux && runtime.GOOS != "linux" {
				t.Skip("the Linux bench runs on Linux")
			}
			if p.dma && runtime.GOOS == "linux" {
				release, err := testlock.Lock(testlock.DMALatency)
				if err != nil {
					t.Fatal(err)
				}
				defer release()
			}
			path := writePage(t, dir, p.name, p.args)
			ctx, problems := openPage(t, browser, path)
			full, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
			if err != nil {
				t.Fatal(err)
			}
			charts, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("svg.chart")))
			if err != nil {
				t.Fatal(err)
			}
			tables, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("table.num")))
			if err != nil {
				t.Fatal(err)
			}
			if len(charts) != p.charts || len(tables) < p.charts {
				t.Errorf("%d charts and %d numbers tables, want %d charts and a table each", len(charts), len(tables), p.charts)
			}
			save := func(name string, data []byte) {
				os.WriteFile(filepath.Join(dir, name), data, 0o644)
				if shots != "" {
					os.WriteFile(filepath.Join(shots, name), data, 0o644)
				}
			}
			save(p.name+".png", full)
			if share := nonWhite(t, full); share < 0.02 {
				t.Errorf("the 1280×800 screenshot is nearly blank: %.2f %% non-white pixels", share*100)
			}
			// Each chart's box is drawn (not blank: enough non-white
			// pixels), and its data group, which holds only the data (the
			// frame, axes, markers and legend are outside it), has enough
			// coloured pixels: an empty group has no box at all.
			data, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSSAll("svg.chart > g.data")))
			if err != nil {
				t.Fatal(err)
			}
			if len(data) != len(charts) {
				t.Fatalf("%d data groups in %d charts", len(data), len(charts))
			}
			for i := range charts {
				shot, err := chromedp.Run(ctx, chromedp.Screenshot([]cdp.NodeID{charts[i].NodeID}))
				if err != nil {
					t.Fatal(err)
				}
				save(fmt.Sprintf("%s-chart%d.png", p.name, i), shot)
				if share := nonWhite(t, shot); share < 0.02 {
					t.Errorf("chart %d is nearly blank: %.2f %% non-white pixels", i, share*100)
				}
				shot, err = chromedp.Run(ctx, chromedp.Screenshot([]cdp.NodeID{data[i].NodeID}))
				if err != nil {
					t.Fatalf("chart %d's data: %v", i, err)
				}
				if share := colored(t, shot); share < 0.005 {
					t.Errorf("chart %d's data is nearly blank: %.2f %% coloured pixels", i, share*100)
				}
			}
			for _, problem := range problems() {
				t.Error(problem)
			}
		})
	}
}

// openPage loads the page at path in a fresh headless Chromium (its own
// profile) and returns the tab and what went wrong while it loaded:
// console errors and warnings, exceptions, log errors and any network
// request besides the page itself.
func openPage(t *testing.T, browser, path string) (context.Context, func() []string) {
	t.Helper()
	url := "file://" + path
	return openURL(t, browser, url, func(req string) bool { return req == url })
}

// openURL loads url in a fresh headless Chromium as openPage does; a
// request that allowed refuses is a problem.
func openURL(t *testing.T, browser, url string, allowed func(string) bool) (context.Context, func() []string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	}
	ctx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)

	var mu sync.Mutex
	var problems []string
	// What the page asked of a server and what came back, told when the
	// test fails: a page that waits forever on an answer shows here
	// whether the request left the browser and whether it was answered.
	var requests []string
	began := time.Now()
	logRequest := func(format string, args ...any) {
		if len(requests) == 500 {
			requests = requests[1:]
		}
		requests = append(requests, fmt.Sprintf("%8.3fs ", time.Since(began).Seconds())+fmt.Sprintf(format, args...))
	}
	t.Cleanup(func() {
		if t.Failed() {
			mu.Lock()
			defer mu.Unlock()
			t.Logf("the page's requests (the last %d):\n%s", len(requests), strings.Join(requests, "\n"))
		}
	})
	// The listener is added before the tab attaches, so that it
	// sees every event of the page (chromedp docs/API.md, 30).
	ctx, cancel = chromedp.NewContext(ctx, chromedp.WithListener(func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.ConsoleAPICalledTypeError || ev.Type == cdpruntime.ConsoleAPICalledTypeWarning {
				problems = append(problems, fmt.Sprintf("console %s", ev.Type))
			}
		case *cdpruntime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Text)
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError {
				problems = append(problems, "log error: "+ev.Entry.Text)
			}
		case *network.EventRequestWillBeSent:
			if !allowed(ev.Request.URL) {
				problems = append(problems, "network request: "+ev.Request.URL)
			}
			logRequest("%s %s sent (request %s)", ev.Request.Method, ev.Request.URL, ev.RequestID)
		case *network.EventResponseReceived:
			logRequest("request %s answered %d", ev.RequestID, ev.Response.Status)
		case *network.EventLoadingFinished:
			logRequest("request %s finished", ev.RequestID)
		case *network.EventLoadingFailed:
			logRequest("request %s failed: %s", ev.RequestID, ev.ErrorText)
		}
	}))
	t.Cleanup(cancel)
	// The browser session as a whole is bounded only against a hang: each
	// step of a test has its own bound. On a loaded machine Chromium's
	// first start alone took 21 s, and TestUIInBrowser, whose steps all
	// passed, ran past a whole-session bound of 90 s in its screenshots.
	ctx, cancel = context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil { // attach the tab
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, cdplog.Enable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800), chromedp.Navigate(url), chromedp.WaitReady("body")); err != nil {
		t.Fatal(err)
	}
	ctx = context.WithValue(ctx, pageRequestsKey{}, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(requests)
	})
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(problems)
	}
}

// pageRequestsKey carries, in the context openURL returns, what the page
// asked of a server so far (its log of requests).
type pageRequestsKey struct{}

// sentRequest waits until the page has sent a request whose URL ends in
// path, and tells whether it did within the time given.
func sentRequest(ctx context.Context, path string, within time.Duration) bool {
	requests, _ := ctx.Value(pageRequestsKey{}).(func() []string)
	for deadline := time.Now().Add(within); requests != nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, r := range requests() {
			if strings.Contains(r, path+" sent") {
				return true
			}
		}
	}
	return false
}

// TestBrowserSeesProblems shows the browser test can fail: a page with a
// console error and a remote image is caught on both counts.
func TestBrowserSeesProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	path := filepath.Join(t.TempDir(), "bad.html")
	bad := `<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png"><script>console.error("bad")</script></body></html>`
	if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	_, problems := openPage(t, browser, path)
	var got []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		got = problems()
		if strings.Contains(strings.Join(got, "\n"), "console error") && strings.Contains(strings.Join(got, "\n"), "network request: http://127.0.0.1:9/x.png") {
			return
		}
	}
	t.Errorf("the browser test saw %q on a page with a console error and a remote image", got)
}

// nonWhite is the share of a PNG's pixels that are not white.
func nonWhite(t *testing.T, data []byte) float64 {
	return share(t, data, func(r, g, b uint32) bool { return min(r, g, b) < 0xf0 })
}

// colored is the share of a PNG's pixels that are clearly coloured (not
// white, grey or black): the data drawn, not the frame or the text.
func colored(t *testing.T, data []byte) float64 {
	return share(t, data, func(r, g, b uint32) bool { return max(r, g, b)-min(r, g, b) > 40 })
}

func share(t *testing.T, data []byte, counts func(r, g, b uint32) bool) float64 {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if counts(r>>8, g>>8, bl>>8) {
				n++
			}
		}
	}
	return float64(n) / float64(b.Dx()*b.Dy())
}
