package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tickscope/tickscope/internal/testlock"
)

// TestUIInBrowser uses the page as a person would, in headless Chromium,
// on the real binary: `tickscope ui --simulate narrow-band --no-browser`
// loads, its live values appear and change, Measure shows a result, Bench
// shows its progress and ends with the recommendation and its chart, Hold
// then Release changes the holder line and the period; no console error,
// and no request leaves the page's own address. The screenshots are
// checked for content (not blank, the chart's data drawn).
func TestUIInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	browser := chromium(t)
	url := startUI(t, "--simulate", "narrow-band")
	ctx, problems := openURL(t, browser, url, func(req string) bool { return strings.HasPrefix(req, url) })

	// It loads, says SIMULATED, and the live values appear.
	waitFor(t, ctx, "#current", 10*time.Second, "the current period", contains("15.6250"))
	if sim := textOf(t, ctx, "#sim"); sim != "SIMULATED: narrow-band" {
		t.Errorf("the banner reads %q", sim)
	}
	if conn := textOf(t, ctx, "#conn"); conn != "live" {
		t.Errorf("the connection reads %q", conn)
	}
	for sel, want := range map[string]string{"#finest": "0.5000", "#coarsest": "15.6250", "#facts": "per-process", "#who": "not shown", "#startup": "Task Scheduler task tickscope (simulated)", "#held-line": "nothing"} {
		if got := textOf(t, ctx, sel); !strings.Contains(got, want) {
			t.Errorf("%s reads %q, want %q in it", sel, got, want)
		}
	}
	// They change: read again every second.
	first := textOf(t, ctx, "#updated")
	waitFor(t, ctx, "#updated", 5*time.Second, "a second reading", func(s string) bool { return s != first })
	shot(t, ctx, "ui-loaded", "", "#current", "#facts", "#held-line", "#startup", "#measure-cmd", "#bench-cmd", "#hold-cmd", "#hold-from")
	// The Hold field takes the period in ms; its command line says it in
	// the OS's 100 ns units as the user types.
	if got := textOf(t, ctx, "#hold-flag") + " " + textOf(t, ctx, "#hold-unit"); got != "timer period ms" {
		t.Errorf("the Hold field reads %q, want the timer period in ms", got)
	}
	typeInto(t, ctx, "#hold-value", "0.75")
	waitFor(t, ctx, "#hold-cmd", 5*time.Second, "the Hold command line", func(s string) bool {
		return s == "tickscope apply --resolution 7500 (on the model; this command would change this machine)"
	})
	// The while field adds --while, and leaves it out once emptied (by
	// script: chromedp's SetValue cannot set a text input to "").
	if _, err := chromedp.Run(ctx, chromedp.SendKeys(chromedp.CSS("#hold-while"), "game.exe")); err != nil {
		t.Fatalf("typing into #hold-while: %v", err)
	}
	waitFor(t, ctx, "#hold-cmd", 5*time.Second, "the Hold command line with --while", func(s string) bool {
		return s == "tickscope apply --resolution 7500 --while game.exe (on the model; this command would change this machine)"
	})
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(e => { e.value = ""; return e.dispatchEvent(new Event("input", {bubbles: true})) })(document.getElementById("hold-while"))`)); err != nil {
		t.Fatalf("emptying #hold-while: %v", err)
	}
	typeInto(t, ctx, "#hold-value", "0.5")
	// Each form shows its command line before it is pressed.
	for sel, want := range map[string]string{
		"#measure-cmd": "tickscope measure --method sleep --samples 200 --simulate narrow-band",
		"#bench-cmd":   "tickscope bench --samples 200 --simulate narrow-band",
		"#hold-cmd":    "tickscope apply --resolution 5000 (on the model; this command would change this machine)",
	} {
		if got := textOf(t, ctx, sel); got != want {
			t.Errorf("%s reads %q before anything is pressed, want %q", sel, got, want)
		}
	}

	// A refused value is the command's refusal, and its input is marked
	// until an answer refuses it no more.
	typeInto(t, ctx, "#hold-value", "0.1")
	click(t, ctx, "#hold-run")
	waitFor(t, ctx, "#hold-out", 10*time.Second, "the refusal", contains("error: --ms 0.1: allowed 5000..156250"))
	invalid := func() string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll("[aria-invalid=true]")].map((e) => e.id).join(" ")`))
		if err != nil {
			t.Fatalf("reading the marked inputs: %v", err)
		}
		return v
	}
	if got := invalid(); got != "hold-value" {
		t.Errorf("after the refusal the marked inputs are %q, want hold-value", got)
	}
	typeInto(t, ctx, "#hold-value", "0.5")

	// Measure shows a result, with the command line.
	setValue(t, ctx, "#measure-samples", "30")
	click(t, ctx, "#measure-run")
	waitFor(t, ctx, "#measure-out", 30*time.Second, "measure's result", contains("tickscope measure: sleep, 1 ms delay, 30 samples"))
	if cmd := textOf(t, ctx, "#measure-cmd"); cmd != "tickscope measure --method sleep --samples 30 --simulate narrow-band" {
		t.Errorf("measure's command line reads %q", cmd)
	}

	// Bench: progress while it runs (several readings, rising), then the
	// recommendation and the chart.
	setValue(t, ctx, "#bench-samples", "40")
	click(t, ctx, "#bench-run")
	var readings []string
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if p := textOf(t, ctx, "#bench-progress span"); p != "" && (len(readings) == 0 || readings[len(readings)-1] != p) {
			readings = append(readings, p)
		}
		if strings.Contains(textOf(t, ctx, "#bench-out"), "recommend") {
			break
		}
	}
	if len(readings) < 3 || !strings.Contains(readings[0], "of about") {
		t.Errorf("the bench's progress showed %q", readings)
	}
	out := waitFor(t, ctx, "#bench-out", 5*time.Second, "bench's result", contains("SIMULATED    recommend        0.51"))
	if !strings.Contains(out, "next step        tickscope apply --resolution 51") {
		t.Errorf("bench's result: %s", out)
	}
	shot(t, ctx, "ui-bench", "", "#bench-out pre", "#bench-out svg.chart", "#bench-out .chart-box .sim", "#bench-cmd")
	chart := shot(t, ctx, "ui-bench-chart", "#bench-out svg.chart", "#bench-out svg.chart")
	if headings, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("h2")].filter((h) => h.getClientRects().length && h.textContent.trim() === "Bench").length`)); err != nil || headings != 1 {
		t.Errorf("%d visible headings read Bench (%v), want 1", headings, err)
	}
	if share := colored(t, chart); share < 0.005 {
		t.Errorf("the bench's chart is nearly blank: %.2f %% coloured pixels", share*100)
	}

	// The recommendation is offered to hold with one click, beside the
	// bench's result, and is the Hold form's value; one click holds it,
	// which changes the holder line and the period, and Release puts both
	// back.
	waitFor(t, ctx, "#hold-from", 5*time.Second, "the hold form", contains("the bench's recommendation"))
	offer := waitFor(t, ctx, "#hold-pick", 5*time.Second, "the offer to hold the recommendation", contains(" ms, the recommendation"))
	if !strings.HasPrefix(offer, "Hold 0.51") {
		t.Errorf("the offer reads %q", offer)
	}
	if cmd := textOf(t, ctx, "#hold-cmd"); !strings.HasPrefix(cmd, "tickscope apply --resolution 51") {
		t.Errorf("the Hold form's command line reads %q after the bench", cmd)
	}
	click(t, ctx, "#hold-pick")
	held := waitFor(t, ctx, "#held-line", 10*time.Second, "the holder line", contains("tickscope apply --resolution 51"))
	if got := invalid(); got != "" {
		t.Errorf("after the hold the marked inputs are %q, want none", got)
	}
	waitFor(t, ctx, "#current", 5*time.Second, "the held period", contains("0.51"))
	if !strings.Contains(textOf(t, ctx, "#hold-out"), "holding until Release is pressed") {
		t.Errorf("hold's result: %s", textOf(t, ctx, "#hold-out"))
	}
	shot(t, ctx, "ui-held", "", "#held-line", "#hold-out pre", "#hold-cmd")
	if hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("bench-pick").hidden`)); err != nil || !hidden {
		t.Errorf("the offer to hold stays while the page holds (%v)", err)
	}
	if disabled, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("bench-run").disabled`)); err != nil || !disabled {
		t.Errorf("Bench can be pressed while the page holds (%v)", err)
	}
	click(t, ctx, "#release")
	waitFor(t, ctx, "#held-line", 10*time.Second, "the holder line after Release", func(s string) bool { return s == "nothing" })
	waitFor(t, ctx, "#current", 5*time.Second, "the period after Release", contains("15.6250"))
	waitFor(t, ctx, "#hold-out", 5*time.Second, "release's result", contains("released after"))
	t.Logf("held: %s", held)

	// Global on is refused as global refuses it, and the page offers the
	// elevated run; on the model it runs nothing.
	click(t, ctx, "#global-on")
	waitFor(t, ctx, "#global-out", 5*time.Second, "global on", contains("GlobalTimerResolutionRequests needs elevation: run from an elevated terminal (nothing was changed)"))
	waitFor(t, ctx, "#elevate", 5*time.Second, "the offer to elevate", contains("Run tickscope global on elevated"))

	for _, problem := range problems() {
		t.Error(problem)
	}
}

// TestUIHoldsDMALatency: on Linux as root, the page's Hold of
// --dma-latency 0 is in /dev/cpu_dma_latency while held and gone after
// Release (the real binary, on this machine).
func TestUIHoldsDMALatency(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("holding /dev/cpu_dma_latency needs Linux and root")
	}
	browser := chromium(t)
	release, err := testlock.Lock(testlock.DMALatency)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	url := startUI(t)
	ctx, problems := openURL(t, browser, url, func(req string) bool { return strings.HasPrefix(req, url) })
	waitFor(t, ctx, "#hold-flag", 10*time.Second, "the hold form", contains("--dma-latency"))
	// Who's first reading, which fills a box above the form, is in
	// before anything is clicked: a person clicks what they see settled.
	waitFor(t, ctx, "#who", time.Minute, "who's first reading", func(s string) bool { return s != "–" && s != "reading…" })
	holdStays(t, ctx)
	if before := dmaLatency(t); before == 0 {
		t.Fatalf("/dev/cpu_dma_latency already reads 0 before the hold")
	}
	setValue(t, ctx, "#hold-value", "0")
	clicked := time.Now()
	click(t, ctx, "#hold-run")
	if !sentRequest(ctx, "api/hold", 10*time.Second) {
		t.Fatalf("clicking Hold sent no request to api/hold within 10 s")
	}
	// Hold's answer first: a refusal or a failed check says why.
	if out := waitFor(t, ctx, "#hold-out", 20*time.Second, "hold's answer", func(s string) bool { return s != "" }); !strings.Contains(out, "holding until Release") {
		t.Fatalf("hold --dma-latency 0 answered %q", out)
	}
	t.Logf("hold's answer after %v", time.Since(clicked))
	// Every state the server reads after Hold's answer has the hold in
	// it: the first such state the page renders must show it, however
	// long a loaded machine takes to deliver it.
	answered := time.Now()
	if line := renderedAfter(t, ctx, answered, "#held-line"); !strings.Contains(line, "cpu_dma_latency 0 µs") {
		t.Fatalf("the holder line, in the first state read after Hold's answer: %q", line)
	}
	if got := dmaLatency(t); got != 0 {
		t.Errorf("/dev/cpu_dma_latency reads %d while the page holds 0", got)
	}
	if facts := renderedAfter(t, ctx, answered, "#facts"); !strings.Contains(facts, "0 µs (held by some process)") {
		t.Errorf("the live state, in the first state read after Hold's answer: %q", facts)
	}
	shot(t, ctx, "ui-linux-held", "", "#held-line", "#hold-out pre", "#hold-cmd", "#facts")
	click(t, ctx, "#release")
	// Release answers asynchronously; the line must come back to
	// "nothing", bounded only against a hang.
	waitFor(t, ctx, "#held-line", time.Minute, "the holder line after Release", func(s string) bool { return s == "nothing" })
	if got := dmaLatency(t); got == 0 {
		t.Errorf("/dev/cpu_dma_latency still reads 0 after Release")
	}
	for _, problem := range problems() {
		t.Error(problem)
	}
}

// holdStays checks that who's text, however long, does not move the Hold
// button (who must be shown, as on Linux as root): it is read again every
// few seconds and after every action, and
// its lines change with other processes, so a page that moved the form as
// it did would take a click meant for Hold somewhere else.
func holdStays(t *testing.T, ctx context.Context) {
	t.Helper()
	const probe = `(() => {
		const top = () => document.getElementById("hold-run").getBoundingClientRect().top;
		const who = document.getElementById("who-text");
		if (who.offsetHeight === 0) return [];
		const before = top(), text = who.textContent;
		who.textContent = "";
		const empty = top();
		who.textContent = Array.from({length: 60}, (_, i) => "process " + i).join("\n");
		const long = top();
		who.textContent = text;
		return [before, empty, long];
	})()`
	tops, err := chromedp.Run(ctx, chromedp.Evaluate[[]float64](probe))
	if err != nil {
		t.Fatalf("measuring the Hold button: %v", err)
	}
	if len(tops) == 0 {
		t.Fatalf("who's text is not shown: nothing to check the Hold button against")
	}
	if tops[0] != tops[1] || tops[0] != tops[2] {
		t.Errorf("the Hold button's top moves with who's text: %v px (as read, empty, 60 lines)", tops)
	}
}

// dmaLatency reads the kernel's aggregate /dev/cpu_dma_latency request.
func dmaLatency(t *testing.T) int32 {
	t.Helper()
	data, err := os.ReadFile("/dev/cpu_dma_latency")
	if err != nil || len(data) != 4 {
		t.Fatalf("reading /dev/cpu_dma_latency: %d bytes, %v", len(data), err)
	}
	return int32(binary.NativeEndian.Uint32(data))
}

// startUI builds this tickscope and runs `tickscope ui ARGS --no-browser`,
// as a user would, and returns the address it printed. The process is
// interrupted (Ctrl+C) when the test ends, and must then exit 0.
func startUI(t *testing.T, args ...string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "tickscope")
	if out, err := exec.Command("go", "build", "-o", exe, ".").CombinedOutput(); err != nil {
		t.Fatalf("building tickscope: %v\n%s", err, out)
	}
	cmd := exec.Command(exe, append(append([]string{"ui"}, args...), "--no-browser")...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// After a failure, SIGQUIT: Go's runtime prints every goroutine of
		// the server (what an action waited on) and exits.
		failed := t.Failed()
		sig := os.Interrupt
		if failed {
			sig = syscall.SIGQUIT
		}
		cmd.Process.Signal(sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			switch {
			case failed:
				t.Logf("tickscope ui's standard error, ended by SIGQUIT after the failure:\n%s", stderr.String())
			case err != nil:
				t.Errorf("tickscope ui after Ctrl+C: %v\n%s", err, stderr.String())
			}
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			t.Errorf("tickscope ui still runs 15 s after %v", sig)
		}
	})
	lines := bufio.NewReader(stdout)
	found := make(chan string, 1)
	go func() {
		for {
			line, err := lines.ReadString('\n')
			if _, url, ok := strings.Cut(line, "tickscope ui: "); ok {
				found <- strings.TrimSpace(url)
			}
			if err != nil {
				close(found)
				return
			}
		}
	}()
	select {
	case url, ok := <-found:
		if !ok || !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Fatalf("tickscope ui printed no address on 127.0.0.1 (%q): %s", url, stderr.String())
		}
		go io.Copy(io.Discard, lines)
		return url
	case <-time.After(30 * time.Second):
		t.Fatalf("no address after 30 s: %s", stderr.String())
	}
	return ""
}

// textOf reads an element's text.
func textOf(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	text, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("%s: %v", sel, err)
	}
	return text
}

// renderedAfter waits until the page has rendered a state the server read
// after t0 (its "updated" time), then returns sel's text as that state
// left it. A check of that text tells a page that is wrong from one that is
// late: a fixed wait for the text to appear cannot, on a loaded machine.
// The wait itself is bounded only against a hang (a minute).
func renderedAfter(t *testing.T, ctx context.Context, t0 time.Time, sel string) string {
	t.Helper()
	check := fmt.Sprintf("state !== null && Date.parse(state.updated) > %d", t0.UnixMilli())
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		fresh, err := chromedp.Run(ctx, chromedp.Evaluate[bool](check))
		if err != nil {
			t.Fatalf("reading the page's state: %v", err)
		}
		if fresh {
			return textOf(t, ctx, sel)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no state read after %s rendered within a minute", t0.Format(time.RFC3339Nano))
		}
	}
}

// waitFor polls until ok holds of sel's text, and returns it.
func waitFor(t *testing.T, ctx context.Context, sel string, within time.Duration, what string, ok func(string) bool) string {
	t.Helper()
	var text string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if text = textOf(t, ctx, sel); ok(text) {
			return text
		}
	}
	t.Fatalf("%s: after %v %s reads %q", what, within, sel, text)
	return ""
}

func contains(s string) func(string) bool {
	return func(t string) bool { return strings.Contains(t, s) }
}

// typeInto replaces an input's value by typing, as a person does (the
// page sees each key).
func typeInto(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), ""), chromedp.SendKeys(chromedp.CSS(sel), value)); err != nil {
		t.Fatalf("typing into %s: %v", sel, err)
	}
}

// click clicks a button.
func click(t *testing.T, ctx context.Context, sel string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
		t.Fatalf("clicking %s: %v", sel, err)
	}
}

// setValue types a value into an input.
func setValue(t *testing.T, ctx context.Context, sel, value string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS(sel), value)); err != nil {
		t.Fatalf("setting %s: %v", sel, err)
	}
}

// shot takes a screenshot of the page, or of the element sel, saves it for
// whoever looks (TICKSCOPE_SCREENSHOT_DIR), and checks it: not blank (some
// ink: text, borders, a chart), and each element of shown in the page,
// visible and not empty.
func shot(t *testing.T, ctx context.Context, name, sel string, shown ...string) []byte {
	t.Helper()
	var data []byte
	var err error
	if sel == "" {
		data, err = chromedp.Run(ctx, chromedp.FullScreenshot(100))
	} else {
		data, err = chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	}
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if dir := os.Getenv("TICKSCOPE_SCREENSHOT_DIR"); dir != "" {
		os.WriteFile(filepath.Join(dir, name+".png"), data, 0o644)
	}
	if ink := share(t, data, func(r, g, b uint32) bool { return max(r, g, b) < 160 }); ink < 0.002 {
		t.Errorf("screenshot %s is nearly blank: %.3f %% dark pixels", name, ink*100)
	}
	missing, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`(`+jsQuote(shown)+`).filter((sel) => {
		const e = document.querySelector(sel);
		return !e || e.getClientRects().length === 0 || e.textContent.trim() === "";
	})`))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(missing) != 0 {
		t.Errorf("screenshot %s: %q missing, hidden or empty in the page", name, missing)
	}
	return data
}

// jsQuote is a list of strings as a JavaScript array literal.
func jsQuote(list []string) string {
	data, _ := json.Marshal(append([]string{}, list...))
	return string(data)
}
