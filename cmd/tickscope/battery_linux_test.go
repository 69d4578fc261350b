package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tickscope/tickscope/internal/httpserver"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/testlock"
)

// TestHostileBattery tries hostile and careless inputs, as a user who
// means harm or makes mistakes would, against the real tickscope (a
// process of its own for each command line): command lines, ui's HTTP
// server, --listen, output paths, raw files and signals. Each input has
// the outcome tickscope promises written beside it, and the test fails on
// any that differs. The summary table (set, tried, as promised) is logged;
// run with -v to see it.
func TestHostileBattery(t *testing.T) {
	b := &battery{t: t, tally: map[string]*[2]int{}}
	defer b.summary()
	t.Run("command lines", b.commandLines)
	t.Run("ui", b.ui)
	t.Run("listen", b.listen)
	t.Run("output paths", b.outputPaths)
	t.Run("raw files", b.rawFiles)
	t.Run("signals", b.signals)
}

// battery counts, per set, the inputs tried and those whose outcome was as
// promised.
type battery struct {
	t     *testing.T
	mu    sync.Mutex
	sets  []string
	tally map[string]*[2]int
}

// record counts one input of set; err says how its outcome differed from
// the promise (nil: as promised).
func (b *battery) record(t *testing.T, set, input string, err error) {
	t.Helper()
	b.mu.Lock()
	n := b.tally[set]
	if n == nil {
		n = new([2]int)
		b.tally[set] = n
		b.sets = append(b.sets, set)
	}
	n[0]++
	if err == nil {
		n[1]++
	}
	failed := n[0] - n[1]
	b.mu.Unlock()
	if err != nil {
		t.Errorf("%s: %.200q: %v", set, input, err)
	}
	// A refusal that is not one may be a command that runs until it is
	// killed: a set that fails this often is broken, and stops.
	if failed >= 20 {
		t.Fatalf("%s: stopping after %d inputs not as promised", set, failed)
	}
}

func (b *battery) summary() {
	var sb strings.Builder
	sb.WriteString("\n| set | tried | as promised |\n| --- | ---: | ---: |\n")
	tried, kept := 0, 0
	for _, set := range b.sets {
		n := b.tally[set]
		fmt.Fprintf(&sb, "| %s | %d | %d |\n", set, n[0], n[1])
		tried, kept = tried+n[0], kept+n[1]
	}
	fmt.Fprintf(&sb, "| all | %d | %d |\n", tried, kept)
	b.t.Log(sb.String())
	if len(b.sets) == 6 && tried < 300 {
		b.t.Errorf("the battery tried %d inputs, want at least 300", tried)
	}
}

// outcome is how a tickscope process ended.
type outcome struct {
	code           int
	stdout, stderr string
}

// tickscopeIn runs tickscope (the test binary, on PATH through
// testscript.Main) in dir with args, killed after limit.
func tickscopeIn(dir string, limit time.Duration, args ...string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tickscope", args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		code = -1
	}
	if ctx.Err() != nil {
		code = -1
		stderr.WriteString("(killed after " + limit.String() + ")")
	}
	return outcome{code, stdout.String(), stderr.String()}
}

// tickscopeTo runs tickscope as tickscopeIn does, its standard output
// the file stdout.
func tickscopeTo(dir string, stdout *os.File, limit time.Duration, args ...string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "tickscope", args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		code = -1
	}
	if ctx.Err() != nil {
		code = -1
		stderr.WriteString("(killed after " + limit.String() + ")")
	}
	return outcome{code, "", stderr.String()}
}

// refusal is nil when o is a usage refusal as promised: exit 2, nothing on
// standard output, one line of printable text on standard error, starting
// "tickscope: error: " and holding want, of a bounded length.
func refusal(o outcome, want string) error {
	line, rest, _ := strings.Cut(o.stderr, "\n")
	switch {
	case o.code != 2:
		return fmt.Errorf("exit %d, want 2; stderr %.300q", o.code, o.stderr)
	case o.stdout != "":
		return fmt.Errorf("stdout %.200q, want nothing", o.stdout)
	case rest != "" || !strings.HasSuffix(o.stderr, "\n"):
		return fmt.Errorf("stderr is not one line: %.300q", o.stderr)
	case !strings.HasPrefix(line, "tickscope: error: ") || !strings.Contains(line, want):
		return fmt.Errorf("stderr %.300q, want one line holding %q", line, want)
	}
	return shownSafely(line)
}

// shownSafely is nil when s is valid UTF-8 of at most 600 characters with
// no C0 or C1 control character or DEL: nothing a terminal would act on.
func shownSafely(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("invalid UTF-8: %.200q", s)
	}
	if n := utf8.RuneCountInString(s); n > 600 {
		return fmt.Errorf("a line of %d characters: %.200q", n, s)
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) {
			return fmt.Errorf("control character %U in %.200q", r, s)
		}
	}
	return nil
}

// listing names what dir holds, to show that a refusal wrote nothing.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// refusedInDir runs args in dir and checks a refusal that leaves dir as
// it was.
func refusedInDir(t *testing.T, dir, want string, args ...string) error {
	before := listing(t, dir)
	err := refusal(tickscopeIn(dir, 10*time.Second, args...), want)
	if after := listing(t, dir); err == nil && !slices.Equal(before, after) {
		err = fmt.Errorf("the directory changed: %q, then %q", before, after)
	}
	return err
}

// commandLines: every flag of every command given twice; integers,
// fractions and durations written other than as promised; empty values;
// unknown flags, commands and arguments with control characters; values
// out of bounds. Each is exit 2 in one line naming what was wrong, and
// writes nothing.
func (b *battery) commandLines(t *testing.T) {
	// A refusal that regressed could hold /dev/cpu_dma_latency (apply).
	release, err := testlock.Lock(testlock.DMALatency)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	dir := t.TempDir()
	type input struct {
		args []string
		want string
	}
	var inputs []input
	root := (&app{stdout: io.Discard, stderr: io.Discard}).rootCommand()
	var walk func(*cobra.Command)
	walk = func(cmd *cobra.Command) {
		path := strings.Fields(cmd.CommandPath())[1:]
		// Commands that take arguments are given valid ones, so that
		// what is refused is the flag.
		switch cmd.Name() {
		case "analyze":
			path = append(path, "missing.json")
		case "global":
			path = append(path, "on")
		}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name == "help" || f.Name == "version" {
				return
			}
			flag := "--" + f.Name
			with := func(vs ...string) []string { return append(slices.Clone(path), vs...) }
			switch f.Value.Type() {
			case "bool":
				inputs = append(inputs, input{with(flag, flag), flag + " is given twice"})
			case "int", "int32", "int64", "uint", "uint32", "uint64":
				inputs = append(inputs, input{with(flag, "1", flag, "1"), flag + " is given twice"})
				for _, v := range []string{"010", "0x10", "0b1", "0o7", "1_000", "+1", "1e3", "１"} {
					inputs = append(inputs, input{with(flag, v), `for "` + flag + `" flag: not a decimal integer`})
				}
				inputs = append(inputs, input{with(flag, "99999999999999999999"), `for "` + flag + `" flag: out of range`})
			case "float64":
				inputs = append(inputs, input{with(flag, "1", flag, "1"), flag + " is given twice"})
				for _, v := range []string{"0x1p-1", "1e-1", "NaN", "Inf", "0_5"} {
					inputs = append(inputs, input{with(flag, v), `for "` + flag + `" flag: not a decimal number`})
				}
			case "duration":
				inputs = append(inputs,
					input{with(flag, "1ms", flag, "1ms"), flag + " is given twice"},
					input{with(flag, "1.5ns"), `for "` + flag + `" flag: not a whole number of nanoseconds`},
					input{with(flag, "soon"), `for "` + flag + `" flag: not a duration`})
			case "string":
				inputs = append(inputs,
					input{with(flag, "x", flag, "y"), flag + " is given twice"},
					input{with(flag, ""), flag + ` "": empty`})
			default:
				t.Errorf("%s %s: a flag of type %s the battery does not know", cmd.CommandPath(), flag, f.Value.Type())
			}
		})
		if cmd.Args != nil && cmd != root && !slices.Contains([]string{"help", "global", "analyze", "completion", "run"}, cmd.Name()) && cmd.Parent().Name() != "completion" {
			inputs = append(inputs, input{append(slices.Clone(path), "\x1b[2Jstray"), "takes no arguments"})
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
	long := strings.Repeat("z", 100_000)
	inputs = append(inputs,
		input{[]string{"measure", "--\x1b]52;c;Zm9v\x07"}, `unknown flag: "--\x1b]52;c;Zm9v\a"`},
		input{[]string{"measure", "--a\nrecommend FORGED"}, `unknown flag: "--a\nrecommend FORGED"`},
		input{[]string{"measure", "--" + long}, "unknown flag: --zzz"},
		input{[]string{"\u009b2Jfrob"}, `unknown command "\u009b2Jfrob"`},
		input{[]string{"\x9b2Jfrob"}, `unknown command "\x9b2Jfrob"`},
		input{[]string{"run", "\x1b[2Jstray"}, `run needs -- before the command: tickscope run [setting] -- \x1b[2Jstray`},
		input{[]string{long}, "unknown command"},
		input{[]string{"measure", "--seed", "5"}, "--seed 5: the model's seed, used only with --simulate"},
		input{[]string{"curve", "--seed", "5"}, "--seed 5: the model's seed"},
		input{[]string{"ui", "--seed", "5", "--no-browser"}, "--seed 5: the model's seed"},
		input{[]string{"bench", "--simulate", "list", "--seed", "5"}, "--simulate list runs nothing"},
		input{[]string{"measure", "--simulate", "no-such-scenario"}, "--simulate no-such-scenario: the scenarios are"},
		input{[]string{"measure", "--simulate", long}, "--simulate zzz"},
		input{[]string{"analyze", strings.Repeat("n", 5000)}, "… (5000 characters): open: file name too long"},
		input{[]string{"analyze"}, "analyze takes one FILE, got 0"},
		input{[]string{"analyze", "a", "b"}, "analyze takes one FILE, got 2"},
		input{[]string{"global"}, "needs one argument: on or off"},
		input{[]string{"global", "maybe"}, `global "maybe": allowed on or off`},
		input{[]string{"global", "on", "off"}, "takes one argument"},
		input{[]string{"completion", "tcsh"}, `completion "tcsh": the shells offered are`},
		input{[]string{"run", "--slack", "1us", "stray", "--", "true"}, "only flags go there"},
		input{[]string{"measure", "--samples", "0"}, "--samples 0: "},
		input{[]string{"measure", "--samples", "-1"}, "--samples -1: "},
		input{[]string{"measure", "--delay", "0"}, "--delay 0s: allowed above 0"},
		input{[]string{"measure", "--delay", "2s"}, "--delay 2s: allowed above 0 and at most 1s"},
		input{[]string{"measure", "--delay", "-1ms"}, "--delay -1ms: "},
		input{[]string{"measure", "--method", "no-such-method"}, "--method no-such-method: valid methods"},
		input{[]string{"measure", "--method", "a\x1b[31mred"}, `--method "a\x1b[31mred"`},
		input{[]string{"measure", "--slack", "2s"}, "--slack 2s: allowed 1ns..1s"},
		input{[]string{"measure", "--resolution", "5000"}, "--resolution 5000: a Windows setting"},
		input{[]string{"bench", "--samples", "19"}, "--samples 19: "},
		input{[]string{"bench", "--simulate", "narrow-band", "--from", "4999"}, "--from 4999: allowed"},
		input{[]string{"bench", "--prefer", "speed"}, "--prefer speed: "},
		input{[]string{"compare", "--cycles", "9"}, "--cycles 9: "},
		input{[]string{"measure", "--load", "-1"}, "--load -1: allowed 0.."},
		input{[]string{"bench", "--load", "100000"}, "--load 100000: allowed 0.."},
		input{[]string{"compare", "--load", "2147483648"}, "--load 2147483648: allowed 0.."},
		input{[]string{"bench", "--simulate", "narrow-band", "--load", "1"}, "--load 1: the model of Windows timers"},
		input{[]string{"measure", "--simulate", "narrow-band", "--load", "0"}, "--load 0: the model of Windows timers"},
		input{[]string{"compare", "--methods", "spin,spin"}, "spin is named twice"},
		input{[]string{"compare", "--methods", "spin,"}, "an empty name in the list"},
		input{[]string{"curve", "--step", "0"}, "--step 0s: "},
		input{[]string{"curve", "--to", "2s"}, "--to 2s: "},
		input{[]string{"watch", "--every", "99ms"}, "--every 99ms: allowed 100ms..1h"},
		input{[]string{"watch", "--every", "2h"}, "--every 2h0m0s: allowed 100ms..1h"},
		input{[]string{"watch", "--measure-every", "500ms"}, "--measure-every 500ms: "},
		input{[]string{"who", "--watch", "-1s"}, "--watch -1s: "},
		input{[]string{"apply"}, "apply needs a setting"},
		input{[]string{"apply", "--dma-latency", "-1"}, "--dma-latency -1: allowed 0..2000000000"},
		input{[]string{"apply", "--dma-latency", "2000000001"}, "--dma-latency 2000000001: allowed 0..2000000000"},
		input{[]string{"apply", "--pid", "-1", "--slack", "1us"}, "--pid -1: "},
		input{[]string{"apply", "--pid", "0", "--slack", "1us"}, "--pid 0: "},
		input{[]string{"apply", "--pid", "1", "--slack", "2s"}, "--slack 2s: allowed 0..1s"},
		input{[]string{"apply", "--pid", "1"}, "--slack"},
		input{[]string{"apply", "--dma-latency", "7", "--for", "-1s"}, "--for -1s: "},
		input{[]string{"apply", "--dma-latency", "7", "--dry-run"}, "--dry-run"},
		input{[]string{"apply", "--ms", "0.5"}, "--ms 0.5: a Windows setting"},
		input{[]string{"apply", "--dma-latency", "7", "--persist", "--boot"}, "--boot: on Linux the systemd unit --persist installs starts at boot already"},
		input{[]string{"apply", "--dma-latency", "7", "--as-service"}, "--as-service true: a Windows setting"},
		input{[]string{"run", "--slack", "1us"}, "run needs a command after --"},
		input{[]string{"run", "--", "true"}, "tickscope run needs a setting"},
	)
	for _, in := range inputs {
		b.record(t, "command lines", strings.Join(in.args, " "), refusedInDir(t, dir, in.want, in.args...))
	}
}

// runningTickscope is a tickscope process the battery talks to while it
// runs.
type runningTickscope struct {
	cmd    *exec.Cmd
	stdout *bufio.Reader
	stderr *strings.Builder
	// done is closed once the process has exited and been waited for.
	done chan struct{}
}

// start starts tickscope in dir; the test's cleanup kills it if it still
// runs.
func start(t *testing.T, dir string, args ...string) *runningTickscope {
	t.Helper()
	cmd := exec.Command("tickscope", args...)
	cmd.Dir = dir
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &runningTickscope{cmd: cmd, stdout: bufio.NewReader(out), stderr: new(strings.Builder), done: make(chan struct{})}
	cmd.Stderr = &lockedWriter{w: r.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// readLine reads a line of standard output, failing after a while.
func (r *runningTickscope) readLine(t *testing.T) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		s, _ := r.stdout.ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		return s
	case <-time.After(60 * time.Second):
		t.Fatalf("tickscope %v printed no line in 60 s", r.cmd.Args[1:])
		return ""
	}
}

// stop signals the process and returns its exit status (-1 if it does not
// exit within a minute).
func (r *runningTickscope) stop(sig os.Signal) int {
	r.cmd.Process.Signal(sig)
	select {
	case <-r.done:
		return r.cmd.ProcessState.ExitCode()
	case <-time.After(60 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
		return -1
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// descriptors counts a process's open descriptors.
func descriptors(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// idleConnections opens 200 connections to addr that send nothing, and is
// nil when the server's descriptors grew by no more than its cap (and a
// few); the connections are closed before it returns.
func idleConnections(t *testing.T, pid int, addr string) error {
	before := descriptors(t, pid)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for range 200 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return fmt.Errorf("connection %d: %v", len(conns)+1, err)
		}
		conns = append(conns, c)
	}
	// The server accepts what it will at once; give it the time to
	// accept more than it should, then count.
	most := 0
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		most = max(most, descriptors(t, pid)-before)
	}
	if limit := httpserver.Defaults.MaxConns + 8; most > limit {
		return fmt.Errorf("200 idle connections took %d descriptors of the server (from %d), want at most %d", most, before, limit)
	}
	return nil
}

// uiRequest is one request to ui, with the status promised; TOKEN in a
// path is the run's token, ADDR in a header its address.
type uiRequest struct {
	name, method, path, host, origin, contentType, body string
	status                                              int
}

// ui: the page's server refuses requests without the token, for another
// Host or Origin, by the wrong method or content type, with a body that is
// not one JSON object of the action's fields; it never answers with the
// token, runs nothing it refused, and holds few descriptors whatever
// number of idle connections is opened.
func (b *battery) ui(t *testing.T) {
	dir := t.TempDir()
	p := start(t, dir, "ui", "--no-browser", "--simulate", "narrow-band")
	line := p.readLine(t)
	_, url, ok := strings.Cut(strings.TrimSpace(line), "tickscope ui: ")
	if !ok {
		t.Fatalf("ui printed %q", line)
	}
	rest := strings.TrimPrefix(url, "http://")
	addr, token, _ := strings.Cut(strings.TrimSuffix(rest, "/"), "/")
	_, port, _ := net.SplitHostPort(addr)
	origin := "http://" + addr

	wrong := []byte(token)
	wrong[0] ^= 1
	var requests []uiRequest
	for _, tok := range []struct {
		name string
		path func(string) string
	}{
		{"no token", func(p string) string { return "/" + p }},
		{"wrong token", func(p string) string { return "/" + string(wrong) + "/" + p }},
		{"token cut", func(p string) string { return "/" + token[:42] + "/" + p }},
		{"token and more", func(p string) string { return "/" + token + "x/" + p }},
		{"token upper-cased", func(p string) string { return "/" + strings.ToUpper(token) + "/" + p }},
		{"token later", func(p string) string { return "/x/" + token + "/" + p }},
		{"token in the query", func(p string) string { return "/" + p + "?token=" + token }},
		{"empty segment", func(p string) string { return "//" + token + "/" + p }},
		{"token without slash", func(p string) string { return "/" + token + p }},
		{"dot segment", func(p string) string { return "/./" + token + "/" + p }},
	} {
		for _, path := range []string{"", "app.js", "events", "result?job=1", "api/measure", "api/hold"} {
			method := "GET"
			if strings.HasPrefix(path, "api/") {
				method = "POST"
			}
			requests = append(requests, uiRequest{tok.name, method, strings.ReplaceAll(tok.path(path), token, "TOKEN"), "ADDR", "ADDR", "application/json", "{}", http.StatusForbidden})
		}
	}
	for _, host := range []string{"evil.example:" + port, "localhost:" + port, "127.0.0.1", "127.0.0.1:1", "[::1]:" + port, "127.0.0.2:" + port, addr + ".", "LOCALHOST:" + port, "0.0.0.0:" + port, "127.1:" + port, "2130706433:" + port} {
		for _, path := range []string{"TOKEN/", "TOKEN/events", "TOKEN/api/measure"} {
			method := map[bool]string{true: "POST", false: "GET"}[strings.Contains(path, "api/")]
			requests = append(requests, uiRequest{"Host " + host, method, "/" + path, host, "ADDR", "application/json", "{}", http.StatusForbidden})
		}
	}
	for _, o := range []string{"http://evil.example", "null", "http://localhost:" + port, "https://" + addr, origin + "/", "", "HTTP://" + addr, origin + ".evil.example", "http://127.0.0.1", "file://"} {
		for _, action := range []string{"measure", "bench", "hold", "persist", "remove", "global", "elevate", "release", "stop"} {
			requests = append(requests, uiRequest{"Origin " + o, "POST", "/TOKEN/api/" + action, "ADDR", o, "application/json", `{}`, http.StatusForbidden})
		}
	}
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "FROB"} {
		requests = append(requests, uiRequest{"method " + m + " on the page", m, "/TOKEN/", "ADDR", "ADDR", "", "", http.StatusMethodNotAllowed})
	}
	for _, m := range []string{"GET", "HEAD", "PUT", "DELETE", "OPTIONS"} {
		requests = append(requests, uiRequest{"method " + m + " on an action", m, "/TOKEN/api/measure", "ADDR", "ADDR", "application/json", "", http.StatusMethodNotAllowed})
	}
	for _, ct := range []string{"application/x-www-form-urlencoded", "text/plain", "multipart/form-data; boundary=x", "", "application/json-seq", "application/jsonx", "text/json"} {
		requests = append(requests, uiRequest{"Content-Type " + ct, "POST", "/TOKEN/api/measure", "ADDR", "ADDR", ct, `{"samples":5}`, http.StatusUnsupportedMediaType})
	}
	for _, path := range []string{"api/", "api/frob", "api/measure/x", "api/../api/measure", "api/MEASURE"} {
		requests = append(requests, uiRequest{"unknown action " + path, "POST", "/TOKEN/" + path, "ADDR", "ADDR", "application/json", `{}`, http.StatusNotFound})
	}
	for _, path := range []string{"../../etc/passwd", "static/app.js", "index.html", "%2e%2e/", ".git/config"} {
		requests = append(requests, uiRequest{"path " + path, "GET", "/TOKEN/" + path, "ADDR", "ADDR", "", "", http.StatusNotFound})
	}
	for _, body := range []struct{ action, body string }{
		{"hold", `{"ms":"1"}garbage`}, {"hold", `{"ms":"1"}{"ms":"2"}`}, {"hold", `{"pid":"1","pid":"2","slack":"1us"}`},
		{"hold", `{"ms":1}`}, {"hold", `{"for":"1s"}`}, {"hold", `{"MS":"1"}`}, {"hold", `{"persist":"true","dma-latency":"0"}`},
		{"persist", `{"resolution":"5000"} x`}, {"persist", `{"resolution":"5000","resolution":"6000"}`},
		{"measure", `{"samples":5}{"samples":6}`}, {"measure", `{"samples":5} ]`}, {"measure", `{"samples":5,"samples":6}`},
		{"measure", `{"Samples":5}`}, {"measure", `{"samples":"5"}`}, {"measure", `{"samples":5.5}`}, {"measure", `{"samples":1e400}`},
		{"measure", `{"samples":{"a":1,"a":2}}`}, {"measure", `{"samples":5,}`}, {"measure", `{'samples':5}`}, {"measure", `{"samples":5`},
		{"measure", `{/*x*/}`}, {"measure", "\ufeff{}"}, {"measure", ``}, {"measure", `[]`}, {"measure", `null`}, {"measure", `"x"`},
		{"measure", `5`}, {"measure", "{\"a\x1b[2Jb\":1}"}, {"measure", `{"a\u001b]52;c;Zm9v\u0007":1}`}, {"measure", `{"method":"sleep","x":1}`},
		{"bench", `{"prefer":"power"}x`}, {"bench", `{"prefer":"power","prefer":"latency"}`}, {"bench", `{"samples":200,"budget_p50":1}`},
		{"global", `{"on":true}true`}, {"global", `{"on":"yes"}`}, {"global", `{"on":true,"on":false}`}, {"elevate", `{"on":true,"x":1}`},
		{"stop", `{"x":1}`}, {"release", `{}{}`}, {"remove", `[]`}, {"remove", `{"samples":5}`},
	} {
		requests = append(requests, uiRequest{"body", "POST", "/TOKEN/api/" + body.action, "ADDR", "ADDR", "application/json", body.body, http.StatusBadRequest})
	}
	requests = append(requests,
		uiRequest{"body over 4096 bytes", "POST", "/TOKEN/api/measure", "ADDR", "ADDR", "application/json", `{"method":"` + strings.Repeat("x", 5000) + `"}`, http.StatusRequestEntityTooLarge},
		uiRequest{"body of 1 MB", "POST", "/TOKEN/api/hold", "ADDR", "ADDR", "application/json", `{"ms":"` + strings.Repeat("9", 1<<20) + `"}`, http.StatusRequestEntityTooLarge},
		uiRequest{"URL of 100 kB", "GET", "/TOKEN/" + strings.Repeat("a", 100_000), "ADDR", "ADDR", "", "", http.StatusRequestHeaderFieldsTooLarge},
		uiRequest{"header of 40 kB", "GET", "/TOKEN/", "ADDR", "ADDR", "X-Big: " + strings.Repeat("b", 40_000), "", http.StatusRequestHeaderFieldsTooLarge},
	)

	client := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, r := range requests {
		path := strings.ReplaceAll(r.path, "TOKEN", token)
		name := r.name + ": " + r.method + " " + strings.ReplaceAll(r.path, strings.Repeat("a", 100_000), "a…")
		req, err := http.NewRequest(r.method, "http://"+addr+path, strings.NewReader(r.body))
		if err != nil {
			b.record(t, "ui", name, err)
			continue
		}
		req.Host = strings.ReplaceAll(r.host, "ADDR", addr)
		if o := strings.ReplaceAll(r.origin, "ADDR", origin); o != "" {
			req.Header.Set("Origin", o)
		}
		if big, ok := strings.CutPrefix(r.contentType, "X-Big: "); ok {
			req.Header.Set("X-Big", big)
		} else if r.contentType != "" {
			req.Header.Set("Content-Type", r.contentType)
		}
		resp, err := client.Do(req)
		if err != nil {
			b.record(t, "ui", name, err)
			continue
		}
		got, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		switch {
		case resp.StatusCode != r.status:
			err = fmt.Errorf("status %d, want %d (%.200q)", resp.StatusCode, r.status, got)
		case strings.Contains(string(got), token):
			err = errors.New("the answer carries the token")
		case r.status == http.StatusBadRequest && (!strings.HasPrefix(string(got), "bad request: ") || strings.Count(string(got), "\n") != 1 || shownSafely(strings.TrimSuffix(string(got), "\n")) != nil):
			err = fmt.Errorf("the reason is not one printable line: %.300q", got)
		}
		b.record(t, "ui", name, err)
	}
	// Requests net/http's client will not send: a missing Host, a bare
	// HTTP/1.0, junk instead of HTTP.
	for _, raw := range []struct{ name, send, status string }{
		{"HTTP/1.1 without Host", "GET /TOKEN/ HTTP/1.1\r\n\r\n", "400"},
		{"HTTP/1.0 without Host", "GET /TOKEN/ HTTP/1.0\r\n\r\n", "403"},
		{"two Hosts", "GET /TOKEN/ HTTP/1.1\r\nHost: ADDR\r\nHost: evil.example\r\n\r\n", "400"},
		{"absolute URL for another host", "GET http://evil.example/TOKEN/ HTTP/1.1\r\nHost: ADDR\r\nConnection: close\r\n\r\n", "403"},
		{"junk", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", "400"},
		{"CONNECT", "CONNECT ADDR HTTP/1.1\r\nHost: ADDR\r\nConnection: close\r\n\r\n", "403"},
	} {
		send := strings.ReplaceAll(strings.ReplaceAll(raw.send, "TOKEN", token), "ADDR", addr)
		b.record(t, "ui", raw.name, rawStatus(addr, send, raw.status, token))
	}
	b.record(t, "ui", "200 idle connections", idleConnections(t, p.cmd.Process.Pid, addr))

	// Nothing refused ran: the page's state shows no job and no hold, and
	// the page still answers.
	resp, err := client.Get(url + "events")
	if err == nil {
		var state struct {
			Job, Held any
		}
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close()
		err = json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &state)
		if err == nil && (state.Job != nil || state.Held != nil) {
			err = fmt.Errorf("a refused action ran: job %v, held %v", state.Job, state.Held)
		}
	}
	b.record(t, "ui", "nothing refused ran, and the page answers after it all", err)
	if code := p.stop(syscall.SIGINT); code != 0 {
		t.Errorf("ui exited %d after SIGINT; stderr %q", code, p.stderr)
	}
	if strings.Contains(p.stderr.String(), token) {
		t.Errorf("the token is on standard error")
	}
}

// rawStatus sends send on a connection of its own and is nil when the
// answer's status line has status (and no token).
func rawStatus(addr, send, status, token string) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(c, send); err != nil {
		return err
	}
	answer, _ := io.ReadAll(io.LimitReader(c, 1<<16))
	first, _, _ := strings.Cut(string(answer), "\r\n")
	if !strings.HasPrefix(first, "HTTP/1.1 "+status+" ") && !strings.HasPrefix(first, "HTTP/1.0 "+status+" ") {
		return fmt.Errorf("answered %.100q, want status %s", first, status)
	}
	if token != "" && strings.Contains(string(answer), token) {
		return errors.New("the answer carries the token")
	}
	return nil
}

// freePort is a loopback port nothing listened on a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// listen: --listen refuses a malformed address in one line, a port in use
// exits 1, and the /metrics server is read-only, serves nothing else and
// holds few descriptors whatever number of idle connections is opened.
func (b *battery) listen(t *testing.T) {
	release, err := testlock.Lock(testlock.DMALatency) // as commandLines
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	dir := t.TempDir()
	long := strings.Repeat("9", 5000)
	for _, addr := range []string{"0", "65536", "-1", "99999", "0x50", "1_000", "+80", "localhost:http", "example.com:80", "[::1]", "::1:80",
		"1.2.3.4.5:80", "127.0.0.1:80:80", " 80", "80 ", "%", "\n80", "127.0.0.1:", ":", "[::1]:0", "127.0.0.1:0", "[fe80::1%eth0", "\x1b[2J:80", long} {
		b.record(t, "listen", "watch --listen "+addr, refusedInDir(t, dir, "--listen ", "watch", "--listen", addr))
	}
	for _, args := range [][]string{
		{"apply", "--dma-latency", "7", "--for", "1s", "--listen", "foo"},
		{"apply", "--dma-latency", "7", "--for", "1s", "--listen", "127.0.0.1:0"},
		{"apply", "--dma-latency", "7", "--listen", "9938", "--persist"},
		{"apply", "--pid", "1", "--slack", "1us", "--listen", "9938"},
		{"apply", "--dma-latency", "7", "--listen", "9938", "--listen", "9939"},
	} {
		b.record(t, "listen", strings.Join(args, " "), refusedInDir(t, dir, "--listen", args...))
	}

	port := freePort(t)
	addr := "127.0.0.1:" + port
	p := start(t, dir, "watch", "--listen", port, "--every", "1s", "--measure-every", "1h")
	var up error
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var resp *http.Response
		if resp, up = http.Get("http://" + addr + "/metrics"); up == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("watch --listen %s does not answer: %v; stderr %q", port, up, p.stderr)
		}
	}
	// A second server on the same port: exit 1, one line.
	o := tickscopeIn(dir, 30*time.Second, "watch", "--listen", port)
	if o.code == 1 && strings.Count(o.stderr, "\n") == 1 && strings.Contains(o.stderr, "listening on "+addr+" for --listen") {
		b.record(t, "listen", "a port in use", shownSafely(strings.TrimSpace(o.stderr)))
	} else {
		b.record(t, "listen", "a port in use", fmt.Errorf("exit %d, stderr %q; want 1 and one line naming the address", o.code, o.stderr))
	}
	for _, r := range []struct {
		method, path string
		status       int
	}{
		{"POST", "/metrics", 405}, {"PUT", "/metrics", 405}, {"DELETE", "/metrics", 405}, {"PATCH", "/metrics", 405}, {"OPTIONS", "/metrics", 405},
		{"TRACE", "/metrics", 405}, {"GET", "/", 404}, {"GET", "/metrics/", 404}, {"GET", "/Metrics", 404}, {"GET", "/metrics/x", 404},
		{"GET", "/debug/pprof/", 404}, {"GET", "/debug/vars", 404}, {"GET", "/x/../metrics", 307}, {"GET", "/metrics?x=" + strings.Repeat("y", 4000), 200},
		{"HEAD", "/metrics", 200}, {"GET", "/" + strings.Repeat("a", 100_000), 431},
	} {
		req, _ := http.NewRequest(r.method, "http://"+addr+r.path, strings.NewReader("x"))
		resp, err := (&http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != r.status {
				err = fmt.Errorf("status %d, want %d", resp.StatusCode, r.status)
			} else if r.status != 200 && strings.Contains(string(body), "tickscope_") {
				err = errors.New("a refusal carries metrics")
			}
		}
		b.record(t, "listen", r.method+" "+r.path, err)
	}
	b.record(t, "listen", "two Hosts", rawStatus(addr, "GET /metrics HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "400", ""))
	b.record(t, "listen", "200 idle connections", idleConnections(t, p.cmd.Process.Pid, addr))
	resp, err := http.Get("http://" + addr + "/metrics")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != 200 {
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
	}
	b.record(t, "listen", "a scrape after the idle connections", err)
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Errorf("watch exited %d after SIGTERM; stderr %q", code, p.stderr)
	}
}

// outputPaths: every output flag refuses a directory, a device, a FIFO, a
// socket, a missing directory, a name too long, a link to what it may not
// write, another user's link in a sticky world-writable directory, and a
// file another output or the input names; exit 2 in one line, before
// anything is measured, leaving the directory and the links' targets as
// they were.
func (b *battery) outputPaths(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	if o := tickscopeIn(dir, 60*time.Second, "measure", "--simulate", "narrow-band", "--samples", "20", "--raw", good); o.code != 0 {
		t.Fatalf("the battery's raw file: exit %d: %s", o.code, o.stderr)
	}
	work := filepath.Join(dir, "work")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Mkdir(work, 0o755))
	must(os.Mkdir(filepath.Join(work, "adir"), 0o755))
	must(syscall.Mkfifo(filepath.Join(work, "fifo"), 0o644))
	sock, err := net.Listen("unix", filepath.Join(work, "sock"))
	must(err)
	defer sock.Close()
	must(os.Symlink("adir", filepath.Join(work, "link-to-dir")))
	must(os.Symlink("/dev/null", filepath.Join(work, "link-to-null")))
	must(os.Symlink("fifo", filepath.Join(work, "link-to-fifo")))
	must(os.Symlink("nodir/x.json", filepath.Join(work, "dangling-into-nothing")))
	must(os.Symlink("loop-b", filepath.Join(work, "loop-a")))
	must(os.Symlink("loop-a", filepath.Join(work, "loop-b")))

	type target struct{ name, path, want string }
	targets := []target{
		{"a directory", "adir", "it is a directory"},
		{"the root directory", "/", "it is a directory"},
		{"a missing directory", "nodir/x.json", "no such file or directory"},
		{"/dev/null", "/dev/null", "it is a character device"},
		{"/dev/zero", "/dev/zero", "it is a character device"},
		{"a FIFO", "fifo", "FIFO"},
		{"a socket", "sock", "socket"},
		{"a link to a directory", "link-to-dir", "directory"},
		{"a link to /dev/null", "link-to-null", "character device"},
		{"a link to a FIFO", "link-to-fifo", "FIFO"},
		{"a dangling link into nothing", "dangling-into-nothing", ""},
		{"a link loop", "loop-a", ""},
		{"a name too long", strings.Repeat("n", 300) + ".json", "file name too long"},
		{"a path of 5000 characters", strings.Repeat("d/", 2500), ""},
		{"control characters", "\x1b[2J\x9b\n/x.json", `"\x1b[2J`},
		{"a file under a file", "../good.json/x", "not a directory"},
		{"the file read", good, ""},
		// The run's own streams, pipes here, by every name: refused as
		// the stream, not as a link to nothing.
		{"/dev/stdout", "/dev/stdout", "it is this run's standard output (a pipe)"},
		{"/dev/stderr", "/dev/stderr", "it is this run's standard error (a pipe)"},
		{"/proc/self/fd/1", "/proc/self/fd/1", "it is this run's standard output (a pipe)"},
	}
	sticky := ""
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err == nil {
			// Another user's link, planted in a sticky world-writable
			// directory, to a file of root's.
			// (Not under t.TempDir: its parent is 0700, which nobody
			// cannot cross.)
			base, err := os.MkdirTemp("", "tickscope-battery-")
			must(err)
			defer os.RemoveAll(base)
			must(os.Chmod(base, 0o755))
			shared := filepath.Join(base, "shared")
			must(os.Mkdir(shared, 0o755))
			must(os.Chmod(shared, 0o777|os.ModeSticky))
			sticky = filepath.Join(dir, "precious")
			must(os.WriteFile(sticky, []byte("root's own\n"), 0o600))
			plant := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ln", "-s", sticky, filepath.Join(shared, "planted.json"))
			if out, err := plant.CombinedOutput(); err != nil {
				t.Fatalf("planting a link as nobody: %v: %s", err, out)
			}
			targets = append(targets, target{"another user's link in a sticky directory", filepath.Join(shared, "planted.json"), "is a symlink owned by nobody"})
		}
	}
	measure := []string{"measure", "--simulate", "narrow-band", "--samples", "20"}
	commands := [][]string{
		append(slices.Clone(measure), "--raw"), append(slices.Clone(measure), "--html"),
		append(slices.Clone(measure), "--cyclictest-json"), append(slices.Clone(measure), "--histfile"),
		{"curve", "--simulate", "narrow-band", "--samples", "1", "--to", "2ms", "--raw"},
		{"bench", "--simulate", "narrow-band", "--samples", "20", "--raw"},
		{"bench", "--simulate", "narrow-band", "--samples", "20", "--html"},
		{"compare", "--methods", "spin", "--settings", "default", "--cycles", "10", "--raw"},
		{"analyze", good, "--html"},
		{"watch", "--log"},
	}
	for _, command := range commands {
		flag := command[len(command)-1]
		for _, tg := range targets {
			if tg.path == good && command[0] != "analyze" {
				continue
			}
			args := append(slices.Clone(command), tg.path)
			err := refusedInDir(t, work, flag+" ", args...)
			if err == nil && tg.want != "" {
				err = refusal(tickscopeIn(work, 30*time.Second, args...), tg.want)
			}
			b.record(t, "output paths", strings.Join(command[:1], " ")+" "+flag+" "+tg.name, err)
		}
	}
	for _, args := range [][]string{
		append(slices.Clone(measure), "--raw", "same.json", "--html", "same.json"),
		append(slices.Clone(measure), "--raw", "same.json", "--histfile", "./same.json"),
		append(slices.Clone(measure), "--cyclictest-json", "same.json", "--histfile", "adir/../same.json"),
		{"analyze", good, "--html", good},
		{"analyze", good, "--html", filepath.Join(dir, ".", "good.json")},
	} {
		b.record(t, "output paths", strings.Join(args, " "), refusedInDir(t, work, "", args...))
	}
	// Standard output that cannot be written (/dev/full): exit 1, in one
	// line naming the stream, whichever way the command prints, and no
	// file written after the report.
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	must(err)
	defer full.Close()
	for _, args := range [][]string{
		slices.Clone(measure), append(slices.Clone(measure), "--json"),
		append(slices.Clone(measure), "--html", "full.html"),
		{"analyze", good}, {"analyze", good, "--json"}, {"analyze", good, "--html", "full.html"},
		{"curve", "--simulate", "narrow-band", "--samples", "1", "--to", "2ms"},
		{"bench", "--simulate", "narrow-band", "--samples", "20"},
		{"compare", "--methods", "spin", "--settings", "default", "--cycles", "10"},
		{"query"}, {"query", "--json"}, {"--help"}, {"measure", "--help"}, {"--version"}, {"completion", "zsh"},
	} {
		o := tickscopeTo(work, full, 60*time.Second, args...)
		line, rest, _ := strings.Cut(o.stderr, "\n")
		const want = "tickscope: error: writing standard output: no space left on device"
		var err error
		switch _, statErr := os.Stat(filepath.Join(work, "full.html")); {
		case o.code != 1:
			err = fmt.Errorf("exit %d, want 1; stderr %.300q", o.code, o.stderr)
		case line != want || rest != "":
			err = fmt.Errorf("stderr %.300q, want the one line %q", o.stderr, want)
		case statErr == nil:
			err = errors.New("it wrote full.html after failing to print its report")
		}
		os.Remove(filepath.Join(work, "full.html"))
		b.record(t, "output paths", "stdout /dev/full: "+strings.Join(args, " "), err)
	}
	if sticky != "" {
		got, err := os.ReadFile(sticky)
		fi, _ := os.Stat(sticky)
		if err != nil || string(got) != "root's own\n" || fi.Mode().Perm() != 0o600 {
			t.Errorf("root's file behind the planted link changed: %q, %v (%v)", got, fi.Mode(), err)
		}
	}
}

// rawFiles: analyze refuses a file that is not one tickscope wrote, in
// one printable line naming the file once, whatever the file holds: no
// control character it holds reaches the terminal, and no size or depth
// makes it hang or fail otherwise.
func (b *battery) rawFiles(t *testing.T) {
	dir := t.TempDir()
	if o := tickscopeIn(dir, 60*time.Second, "measure", "--simulate", "narrow-band", "--samples", "20", "--raw", "good.json"); o.code != 0 {
		t.Fatalf("the battery's raw file: exit %d: %s", o.code, o.stderr)
	}
	goodText, err := os.ReadFile(filepath.Join(dir, "good.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := string(goodText)
	if _, err := rawfile.ReadFile(context.Background(), filepath.Join(dir, "good.json"), rawLimits()); err != nil {
		t.Fatalf("the battery's raw file does not read: %v", err)
	}
	// edit replaces the first old in the good file.
	edit := func(old, new string) string {
		if !strings.Contains(good, old) {
			t.Fatalf("the raw file has no %q", old)
		}
		return strings.Replace(good, old, new, 1)
	}
	body := strings.TrimPrefix(good, "{")
	files := []struct{ name, content string }{
		{"empty", ""},
		{"white space", " \n\t"},
		{"an open brace", "{"},
		{"an array", "[]"},
		{"null", "null"},
		{"a number", "1"},
		{"a string", `"x"`},
		{"an empty object", "{}"},
		{"garbage after the object", good + "garbage"},
		{"two objects", good + good},
		{"a byte-order mark", "\ufeff" + good},
		{"UTF-16", "\xff\xfe{\x00}\x00"},
		{"a NUL byte", "\x00" + good},
		{"invalid UTF-8 in a string", edit(`"measure"`, "\"meas\xffure\"")},
		{"a raw ESC in a string", edit(`"measure"`, "\"meas\x1b[2Jure\"")},
		{"a raw newline in a string", edit(`"measure"`, "\"meas\nure\"")},
		{"a raw DEL in a string", edit(`"measure"`, "\"meas\x7fure\"")},
		{"a key of 100000 characters", `{"` + strings.Repeat("k", 100_000) + `":1,` + body},
		{"a key with an escape sequence", "{\"\\u001b]52;c;Zm9v\\u0007\":1," + body},
		{"a duplicate key", `{"version":1,` + body},
		{"a key in the wrong case", `{"VERSION":1,` + body},
		{"version 0", edit(`"version":1`, `"version":0`)},
		{"version 99", edit(`"version":1`, `"version":99`)},
		{"version as a string", edit(`"version":1`, `"version":"1"`)},
		{"version 1e999", edit(`"version":1`, `"version":1e999`)},
		{"version NaN", edit(`"version":1`, `"version":NaN`)},
		{"version -0.5", edit(`"version":1`, `"version":-0.5`)},
		{"an unknown command", edit(`"command":"measure"`, `"command":"bogus"`)},
		{"a command with an escape", edit(`"command":"measure"`, `"command":"\u001b[2Jmeasure"`)},
		{"created not a time", edit(`"created":"`, `"created":"yesterday`)},
		{"a comment", "/* x */" + good},
		{"single quotes", `{'version':1,` + body},
		{"a trailing comma", strings.TrimSuffix(strings.TrimSpace(good), "}") + ",}"},
		{"truncated", good[:len(good)/2]},
		{"an unknown field holding 100000 nested arrays", `{"x":` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `,` + body},
		{"100000 nested arrays for an object", edit(`"requested":{}`, `"requested":`+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000))},
		{"a string of 1 MB", edit(`"priority":"`, `"priority":"`+strings.Repeat("s", 1<<20))},
	}
	// Decoded control characters in the strings the reader accepts: none
	// reaches the terminal (a clipboard write, a forged line).
	for _, payload := range []struct{ name, text string }{
		{"OSC 52 and a forged line", `\u001b]52;c;Zm9v\u0007\u001b[2K\r  recommend FORGED`},
		{"C1 CSI", `\u009b2J`}, {"NUL", `a\u0000b`}, {"DEL", `a\u007fb`}, {"newline", `a\nrecommend FORGED`}, {"bidi override", `a\u202eb`},
	} {
		for _, field := range []struct{ name, old string }{
			{"tool.version", `"version":"` + toolVersion(t, good)}, {"query.windows.product", `"product":"`},
			{"conditions.priority", `"priority":"`}, {"method", `"method":"`},
		} {
			files = append(files, struct{ name, content string }{payload.name + " in " + field.name, edit(field.old, field.old+payload.text)})
		}
	}
	// Values the writer never produces.
	_, afterCPUs, _ := strings.Cut(good, `"cpus":`)
	cpus := afterCPUs[:strings.IndexAny(afterCPUs, ",}")]
	for _, f := range []struct{ name, old, new string }{
		{"cpus -2", `"cpus":` + cpus, `"cpus":-2`},
		{"cpus 0", `"cpus":` + cpus, `"cpus":0`},
		{"cpus 65537", `"cpus":` + cpus, `"cpus":65537`},
		{"tool.name not tickscope", `"name":"tickscope"`, `"name":"evil"`},
		{"an unknown method", `"method":"`, `"method":"bogus`},
		{"an unknown scenario", `"simulated":"`, `"simulated":"bogus`},
		{"stopped false", `"warmup_discarded":`, `"stopped":false,"warmup_discarded":`},
		{"a request of two settings", `"requested":{}`, `"requested":{"slack_ns":1000,"resolution_100ns":5000}`},
		{"an empty granted written", `"granted":{}`, `"granted":{"slack_ns":0}`},
		{"a negative overrun count", `"overruns":0`, `"overruns":-1`},
		{"a negative warm-up", `"warmup_discarded":5`, `"warmup_discarded":-5`},
		{"a negative latency", `"latencies_ns":[`, `"latencies_ns":[-1,`},
		{"a latency of 1e30", `"latencies_ns":[`, `"latencies_ns":[1e30,`},
		{"a fractional latency", `"latencies_ns":[`, `"latencies_ns":[1.5,`},
		{"format not ours", `"format":"tickscope-raw"`, `"format":"other"`},
	} {
		files = append(files, struct{ name, content string }{f.name, edit(f.old, f.new)})
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name+".json")
		if err := os.WriteFile(path, []byte(f.content), 0o644); err != nil {
			t.Fatal(err)
		}
		o := tickscopeIn(dir, 60*time.Second, "analyze", f.name+".json")
		err := refusal(o, f.name+".json")
		if err == nil && strings.Count(o.stderr, f.name+".json") != 1 {
			err = fmt.Errorf("the name is echoed %d times: %q", strings.Count(o.stderr, f.name+".json"), o.stderr)
		}
		b.record(t, "raw files", f.name, err)
	}
	// What is not a regular file, or not there, or over the size limit
	// (a sparse file: no disk used).
	big := filepath.Join(dir, "big.json")
	bigFile, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	bigFile.Truncate(rawfile.MaxFileBytes + 1)
	bigFile.Close()
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, link := range [][2]string{{"/dev/zero", "to-zero"}, {"fifo", "to-fifo"}, {"loop2", "loop1"}, {"loop1", "loop2"}, {"nothing", "dangling"}} {
		if err := os.Symlink(link[0], filepath.Join(dir, link[1])); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []struct{ name, want string }{
		{"big.json", "over the size limit"}, {"/dev/zero", "a character device"}, {"/dev/null", "a character device"},
		{"fifo", "a FIFO"}, {"to-zero", "a character device"}, {"to-fifo", "a FIFO"}, {"loop1", "too many levels of symbolic links"},
		{"dangling", "no such file"}, {".", "a directory"}, {"/proc/self/mem", ""}, {"/proc/self/environ", ""},
		{"missing.json", "missing.json: open: no such file or directory"}, {"\x1b[2Jmissing", `"\x1b[2Jmissing": open: no such file`},
		{strings.Repeat("n", 5000), "(5000 characters): open: file name too long"},
	} {
		b.record(t, "raw files", f.name, refusal(tickscopeIn(dir, 60*time.Second, "analyze", f.name), f.want))
	}
}

// signals: Ctrl+C (SIGINT), SIGTERM and a closed terminal (SIGHUP) end
// every long-running command as promised: measure stops early with the
// raw file of what it measured and no temporary left; ui and watch --listen
// exit 0 and free their port; a hold is released; run passes the signal
// to its program, which ends, and exits with its status.
func (b *battery) signals(t *testing.T) {
	dir := t.TempDir()
	sigs := []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP}
	for _, sig := range sigs {
		raw := "m-" + strconv.Itoa(int(sig)) + ".json"
		p := start(t, dir, "measure", "--samples", "100000", "--raw", raw)
		err := measureStarted(p.cmd.Process.Pid, dir)
		code := p.stop(sig)
		if err == nil {
			err = stoppedEarly(dir, raw, code, p.stderr.String())
		}
		b.record(t, "signals", "measure --raw, "+sig.String(), err)
	}
	{
		p := start(t, dir, "measure", "--samples", "100000", "--raw", "twice.json")
		err := measureStarted(p.cmd.Process.Pid, dir)
		p.cmd.Process.Signal(syscall.SIGINT)
		code := p.stop(syscall.SIGINT)
		if err == nil {
			err = stoppedEarly(dir, "twice.json", code, p.stderr.String())
		}
		b.record(t, "signals", "measure --raw, SIGINT twice", err)
	}
	for _, sig := range sigs {
		p := start(t, dir, "ui", "--no-browser", "--simulate", "narrow-band")
		line := p.readLine(t)
		_, url, _ := strings.Cut(strings.TrimSpace(line), "tickscope ui: ")
		addr, _, _ := strings.Cut(strings.TrimPrefix(url, "http://"), "/")
		var err error
		if code := p.stop(sig); code != 0 {
			err = fmt.Errorf("exit %d; stderr %q", code, p.stderr)
		} else if c, dialErr := net.Dial("tcp", addr); dialErr == nil {
			c.Close()
			err = fmt.Errorf("%s still answers after exit", addr)
		}
		b.record(t, "signals", "ui, "+sig.String(), err)
	}
	for _, sig := range sigs {
		port := freePort(t)
		p := start(t, dir, "watch", "--listen", port, "--every", "100ms", "--measure-every", "1h", "--log", "w.log")
		line := p.readLine(t) // the first event: it runs
		var err error
		if code := p.stop(sig); code != 0 {
			err = fmt.Errorf("exit %d after %q; stderr %q", code, line, p.stderr)
		} else if c, dialErr := net.Dial("tcp", "127.0.0.1:"+port); dialErr == nil {
			c.Close()
			err = fmt.Errorf("port %s still answers after exit", port)
		} else if log, readErr := os.ReadFile(filepath.Join(dir, "w.log")); readErr != nil || !strings.HasSuffix(string(log), "\n") || !strings.Contains(string(log), `"summary"`) {
			err = fmt.Errorf("the log does not end with a whole summary line (%v): %.300q", readErr, log)
		}
		b.record(t, "signals", "watch --listen --log, "+sig.String(), err)
	}
	for _, sig := range sigs {
		p := start(t, dir, "run", "--slack", "1us", "--", "sh", "-c", "echo $$; exec sleep 60")
		child, _ := strconv.Atoi(strings.TrimSpace(p.readLine(t)))
		code := p.stop(sig)
		var err error
		if code != 128+int(sig) {
			err = fmt.Errorf("exit %d, want %d (the program's, killed by %v)", code, 128+int(sig), sig)
		} else if child <= 0 || !gone(child) {
			err = fmt.Errorf("the program (PID %d) still runs", child)
		}
		b.record(t, "signals", "run, "+sig.String(), err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the hold's signals (apply --dma-latency) are not tried")
		return
	}
	release, err := testlock.Lock(testlock.DMALatency)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, sig := range sigs {
		p := start(t, dir, "apply", "--dma-latency", "7", "--no-esc")
		p.readLine(t) // its report: it holds
		err := waitUntil(func() bool { return dmaLatency(t) == 7 }, 30*time.Second, "/dev/cpu_dma_latency to read 7")
		code := p.stop(sig)
		if err == nil && code != 0 {
			err = fmt.Errorf("exit %d; stderr %q", code, p.stderr)
		}
		if err == nil {
			err = waitUntil(func() bool { return dmaLatency(t) != 7 }, 30*time.Second, "the hold to be released")
		}
		b.record(t, "signals", "apply --dma-latency, "+sig.String(), err)
	}
}

// stoppedEarly is nil when a measure ended by a signal exited 0, said it
// stopped early, wrote a valid raw file of what it measured and left no
// temporary file.
func stoppedEarly(dir, raw string, code int, stderr string) error {
	if code != 0 || !strings.Contains(stderr, "stopped early") {
		return fmt.Errorf("exit %d, stderr %q; want 0 and stopped early", code, stderr)
	}
	if _, err := rawfile.ReadFile(context.Background(), filepath.Join(dir, raw), rawLimits()); err != nil {
		return fmt.Errorf("the raw file: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tickscope-") {
			return fmt.Errorf("a temporary is left: %s", e.Name())
		}
	}
	return nil
}

// measureStarted waits until measure (process pid) writing --raw in dir
// has its temporary file open there (it opens it before it measures), then
// a second more, so that a signal finds it measuring.
func measureStarted(pid int, dir string) error {
	err := waitUntil(func() bool {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		return slices.ContainsFunc(fds, func(fd os.DirEntry) bool {
			target, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
			return strings.HasPrefix(target, dir+"/")
		})
	}, 30*time.Second, "temporary raw file open")
	time.Sleep(time.Second)
	return err
}

func waitUntil(done func() bool, limit time.Duration, what string) error {
	for deadline := time.Now().Add(limit); !done(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("no %s after %v", what, limit)
		}
	}
	return nil
}

// gone is whether process pid has exited (or is a zombie) within 10 s.
func gone(pid int) bool {
	return waitUntil(func() bool {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		_, after, _ := strings.Cut(string(stat), ") ")
		return strings.HasPrefix(after, "Z")
	}, 10*time.Second, "exit") == nil
}

// toolVersion is the tool.version a raw file holds.
func toolVersion(t *testing.T, raw string) string {
	var f struct {
		Tool struct{ Version string } `json:"tool"`
	}
	if err := json.Unmarshal([]byte(raw), &f); err != nil || f.Tool.Version == "" {
		t.Fatalf("no tool.version in the raw file (%v)", err)
	}
	return f.Tool.Version
}
