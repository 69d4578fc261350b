package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tickscope/tickscope/internal/persist"
)

// The testscript commands the Wine scripts use (registry diffs, task
// definitions, waiting for a background holder).
func init() {
	scriptCommands["regdiff"] = regdiff
	scriptCommands["taskxml"] = taskxml
	scriptCommands["waitfile"] = waitfile
	scriptCommands["consolealone"] = consolealone
	scriptCommands["servicestate"] = servicestate
}

// consolealone OUT [ARG...]: runs tickscope.exe with ARGs alone on a
// console of its own, as Explorer runs a double-clicked program. Wine makes
// such a console for a program started on a Unix terminal, so it runs
// under script(1)'s pseudo-terminal, widened so that Wine's console does
// not wrap lines. A double-clicked tickscope opens tickscope ui: once the
// console shows its address, the page must answer there (and refuse the
// same path without the token), the program must still run, and Ctrl+C
// typed on the console must end it, exit status 0, within 30 s. Wine's
// winebrowser is disabled, so that no browser of this machine is started:
// the attempt to open one is shown failing. OUT gets what the console
// showed, without its escape sequences.
func consolealone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: consolealone OUT [ARG...]")
	}
	raw := ts.MkAbs(args[0] + ".raw")
	line := "stty cols 250 rows 200; exec wine64 " + shellQuote(ts.Getenv("TICKSCOPE_EXE"))
	for _, a := range args[1:] {
		line += " " + shellQuote(a)
	}
	cmd := exec.Command("script", "-qfec", line, raw)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(os.Environ(), "PATH="+ts.Getenv("PATH"), "WINEPREFIX="+ts.Getenv("WINEPREFIX"), "TMPDIR="+ts.Getenv("TMPDIR"), "WINEDEBUG=-all", "LANG=C.UTF-8", "WINEDLLOVERRIDES="+wineDLLOverrides)
	keys, err := cmd.StdinPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	address := regexp.MustCompile(`tickscope ui: (http://127\.0\.0\.1:[0-9]+/)([A-Za-z0-9_-]+)/`)
	var found []string
	for deadline := time.Now().Add(60 * time.Second); found == nil; time.Sleep(100 * time.Millisecond) {
		data, _ := os.ReadFile(raw)
		found = address.FindStringSubmatch(string(data))
		select {
		case err := <-done:
			ts.Fatalf("it ended (%v) before showing the ui address:\n%s", err, ts.ReadFile(args[0]+".raw"))
		default:
		}
		if found == nil && time.Now().After(deadline) {
			cmd.Process.Kill()
			ts.Fatalf("no ui address within 60 s")
		}
	}
	client := &http.Client{Timeout: 20 * time.Second}
	for url, want := range map[string]int{found[1] + found[2] + "/": http.StatusOK, found[1]: http.StatusForbidden} {
		resp, err := client.Get(url)
		ts.Check(err)
		resp.Body.Close()
		if resp.StatusCode != want {
			ts.Fatalf("GET %s: %d, want %d", strings.Replace(url, found[2], "TOKEN", 1), resp.StatusCode, want)
		}
	}
	select {
	case err := <-done:
		ts.Fatalf("it closed (%v) with the page open", err)
	default:
	}
	io.WriteString(keys, "\x03") // Ctrl+C
	select {
	case err := <-done:
		ts.Check(err)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		ts.Fatalf("still running 30 s after Ctrl+C")
	}
	data, err := os.ReadFile(raw)
	ts.Check(err)
	text := consoleEscapes.ReplaceAllString(string(data), "")
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.ReplaceAll(text, "\r", "")), 0o644))
}

// consoleEscapes are the terminal escape sequences Wine's console writes.
var consoleEscapes = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]|\x1b\][^\x07]*\x07|\x1b[()][0-9A-Z]`)

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// waitfile GLOB: a file matching GLOB exists within 30 s (a background
// command has got that far).
func waitfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile GLOB")
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if matches, _ := filepath.Glob(ts.MkAbs(args[0])); len(matches) > 0 {
			return
		}
	}
	ts.Fatalf("no file matches %s after 30 s", args[0])
}

// servicestate NAME STATE: Wine's service manager says, within 30 s, that
// the service NAME is in STATE (as sc query names it: RUNNING, STOPPED);
// a service starts and stops in its own time.
func servicestate(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: servicestate NAME STATE")
	}
	state := regexp.MustCompile(`STATE\s*:\s*[0-9]+\s+(\S+)`)
	last := ""
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		// wine64 is on the script's PATH, not necessarily on the test's.
		cmd := exec.Command("sh", "-c", `exec wine64 sc query "$1"`, "sh", args[0])
		// The script's environment where Wine reads it: another TMPDIR
		// would reach another wineserver, a session of its own on the
		// same prefix.
		cmd.Env = os.Environ()
		for _, key := range []string{"PATH", "HOME", "TMPDIR", "LANG", "WINEPREFIX", "WINEDEBUG"} {
			cmd.Env = append(cmd.Env, key+"="+ts.Getenv(key))
		}
		cmd.WaitDelay = 5 * time.Second
		out, _ := cmd.Output()
		last = strings.TrimSpace(string(out))
		if m := state.FindStringSubmatch(last); m != nil && m[1] == args[1] {
			return
		}
	}
	ts.Fatalf("the service %s is not %s after 30 s; sc query says:\n%s", args[0], args[1], last)
}

// taskxml FILE UNIXPATH [ARG...]: FILE holds a task definition whose
// command is UNIXPATH as Wine shows it to Windows programs (Z: and
// backslashes) and whose arguments split back to ARGs.
func taskxml(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: taskxml FILE UNIXPATH [ARG...]")
	}
	in, err := persist.ParseTask([]byte(ts.ReadFile(args[0])))
	if err != nil {
		ts.Fatalf("%s: %v", args[0], err)
	}
	want := "Z:" + strings.ReplaceAll(ts.MkAbs(args[1]), "/", `\`)
	if in.Exe != want {
		ts.Fatalf("the task runs %q, want %q", in.Exe, want)
	}
	if strings.Join(in.Args, "\x00") != strings.Join(args[2:], "\x00") {
		ts.Fatalf("the task's arguments are %q, want %q", in.Args, args[2:])
	}
	if !in.Ours() {
		ts.Fatalf("the task's description %q lacks the marker", in.Description)
	}
}

// wineChurn are the values Wine rewrites on every start of a prefix (its
// device enumeration's driver dates): not tickscope's doing.
var wineChurn = regexp.MustCompile(`^"DriverDateData"=`)

// regdiff BEFORE AFTER [ALLOWED]: two copies of a Wine registry file
// (system.reg) differ in no value, or only in values whose "key: line"
// matches the regular expression ALLOWED, and ALLOWED matches at least one
// change. Key timestamps and Wine's own churn are ignored.
func regdiff(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: regdiff BEFORE AFTER [ALLOWED]")
	}
	before, after := readWineRegistry(ts, ts.MkAbs(args[0])), readWineRegistry(ts, ts.MkAbs(args[1]))
	var changes []string
	for line := range before {
		if !after[line] {
			changes = append(changes, "removed "+line)
		}
	}
	for line := range after {
		if !before[line] {
			changes = append(changes, "added "+line)
		}
	}
	sort.Strings(changes)
	var allowed *regexp.Regexp
	if len(args) == 3 {
		allowed = regexp.MustCompile(args[2])
	}
	matched := false
	for _, c := range changes {
		ts.Logf("registry change: %s", c)
		if allowed != nil && allowed.MatchString(c) {
			matched = true
			continue
		}
		ts.Fatalf("unexpected registry change: %s", c)
	}
	if allowed != nil && !matched {
		ts.Fatalf("no registry change matches %s", args[2])
	}
}

// readWineRegistry reads a .reg file Wine keeps as a set of "key: value
// line" strings, and a "key" string for each key, without timestamps.
func readWineRegistry(ts *testscript.TestScript, path string) map[string]bool {
	f, err := os.Open(path)
	ts.Check(err)
	defer f.Close()
	set := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	key, value := "", ""
	for sc.Scan() {
		line := sc.Text()
		if value != "" { // a continued value
			value += strings.TrimSpace(line)
			if !strings.HasSuffix(line, `\`) {
				set[key+": "+value] = true
				value = ""
			}
			continue
		}
		switch {
		case strings.HasPrefix(line, "["):
			key = line[:strings.LastIndex(line, "]")+1]
			set[key] = true
		case strings.HasPrefix(line, `"`) || strings.HasPrefix(line, "@"):
			if wineChurn.MatchString(line) {
				continue
			}
			if strings.HasSuffix(line, `\`) {
				value = line
				continue
			}
			set[key+": "+line] = true
		}
	}
	ts.Check(sc.Err())
	return set
}

// wineUI runs `tickscope.exe ui --no-browser` under Wine in the Windows 10
// prefix and fetches its page, its event stream, and a path without the
// token.
func wineUI(t *testing.T, w *wineSetup) {
	cmd := w.command(w.freshPrefix(t, "win10"), w.wine, w.exe, "ui", "--no-browser")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			if _, url, ok := strings.Cut(lines.Text(), "tickscope ui: "); ok {
				found <- strings.TrimSpace(url)
			}
		}
		close(found)
	}()
	var url string
	select {
	case url = <-found:
	case <-time.After(60 * time.Second):
		t.Fatalf("no address within 60 s:\n%s", stderr.String())
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/") {
		t.Fatalf("tickscope ui printed %q:\n%s", url, stderr.String())
	}
	get := func(u string) (int, string) {
		client := &http.Client{Timeout: 20 * time.Second}
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v\n%s", u, err, stderr.String())
		}
		defer resp.Body.Close()
		if strings.HasSuffix(u, "/events") {
			line, _ := bufio.NewReader(resp.Body).ReadString('\n')
			return resp.StatusCode, line
		}
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(url); code != http.StatusOK || !strings.Contains(body, "<title>tickscope</title>") {
		t.Errorf("the page: %d %.200q", code, body)
	}
	// Wine's timer: coarsest 15.625 ms, finest 1 ms (testing.md).
	if code, line := get(url + "events"); code != http.StatusOK || !strings.Contains(line, `"os":"windows"`) || !strings.Contains(line, `"coarsest_ms":"15.6250"`) {
		t.Errorf("the event stream: %d %.300q", code, line)
	}
	origin := strings.TrimSuffix(url[:strings.LastIndex(strings.TrimSuffix(url, "/"), "/")], "/")
	if code, _ := get(origin + "/"); code != http.StatusForbidden {
		t.Errorf("without the token: %d, want 403", code)
	}
	// The elevated relaunch's plumbing (ShellExecuteExW "runas", its wait
	// and exit code): global off with the value absent changes nothing and
	// exits 0; global on in a prefix without the kernel's key exits 1.
	// Wine shows no consent prompt; what Windows' UAC does is not shown.
	for on, want := range map[bool]string{false: "it exited with code 0", true: "it exited with code 1"} {
		body := fmt.Sprintf(`{"on":%v}`, on)
		req, _ := http.NewRequest("POST", url+"api/elevate", strings.NewReader(body))
		req.Header.Set("Origin", origin)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out struct{ Command, Text, Error string }
		json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if !strings.Contains(out.Text, "ran "+out.Command+" through the shell's runas verb") || !strings.Contains(out.Text, want) {
			t.Errorf("elevate %s: %+v, want %q", body, out, want)
		}
	}
	t.Logf("standard error under Wine:\n%s", stderr.String())
}

// wineTray runs `tickscope.exe ui --simulate narrow-band --no-browser`
// under Wine on a virtual X display, where Wine shows its notification
// area as the window "Wine System Tray", and uses the tray icon's menu with
// xdotool as a person would with the mouse and the keyboard: after a bench
// (run through the page's action), Hold at the recommended setting holds
// it (the page's state says so), Release releases it, and Quit ends ui,
// exit status 0. The menu is walked with the arrow keys, which in Wine's
// menus stop on disabled items too: Open, Hold, Release, Quit. Without
// Xvfb or xdotool it skips, saying why. The tooltip's text is
// trayView's, tested in internal/ui; Wine shows it but it is not read here.
func wineTray(t *testing.T, w *wineSetup) {
	for _, tool := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s: apt-get install xvfb xdotool to test the tray icon under Wine", tool)
		}
	}
	display := ""
	for n := 90; n < 100 && display == ""; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n)); errors.Is(err, fs.ErrNotExist) {
			display = fmt.Sprintf(":%d", n)
		}
	}
	if display == "" {
		t.Skip("no free X display between :90 and :99")
	}
	xvfb := exec.Command("Xvfb", display, "-screen", "0", "1024x768x24", "-nolisten", "tcp")
	if err := xvfb.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { xvfb.Process.Kill(); xvfb.Wait() }()
	xdotool := func(args ...string) (string, error) {
		cmd := exec.Command("xdotool", args...)
		cmd.Env = append(os.Environ(), "DISPLAY="+display)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err
	}
	poll := func(what string, within time.Duration, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(within); !ok(); time.Sleep(200 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within %v", what, within)
			}
		}
	}
	poll("the X display", 10*time.Second, func() bool { _, err := xdotool("getmouselocation"); return err == nil })

	cmd := w.command(w.freshPrefix(t, "win10", "DISPLAY="+display), w.wine, w.exe, "ui", "--simulate", "narrow-band", "--no-browser")
	cmd.Env = append(cmd.Env, "DISPLAY="+display)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Standard error goes to a file, not a pipe: with a display Wine starts
	// explorer.exe for the notification area, which inherits it and
	// outlives ui, and Wait would wait for the pipe's last writer.
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	cmd.Stderr = stderr
	logged := func() string { data, _ := os.ReadFile(stderr.Name()); return string(data) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	exited := false
	defer func() {
		if !exited {
			cmd.Process.Kill()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Errorf("tickscope.exe under Wine still runs 10 s after SIGKILL")
			}
		}
	}()
	lines := bufio.NewReader(stdout)
	first, err := lines.ReadString('\n')
	go io.Copy(io.Discard, lines)
	_, url, ok := strings.Cut(strings.TrimSpace(first), "tickscope ui: ")
	if err != nil || !ok {
		t.Fatalf("no address: %q %v\n%s", first, err, logged())
	}
	origin := url[:strings.LastIndex(strings.TrimSuffix(url, "/"), "/")]

	var tray string
	poll("the tray icon's window", 30*time.Second, func() bool {
		tray, _ = xdotool("search", "--name", "^Wine System Tray$")
		return tray != ""
	})
	if strings.Contains(logged(), "tray icon") {
		t.Errorf("with a display, ui still warns: %s", logged())
	}
	// menu opens the icon's menu and picks the n-th item.
	menu := func(n int) {
		t.Helper()
		if _, err := xdotool("mousemove", "--window", strings.Fields(tray)[0], "7", "10", "click", "3"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		keys := []string{"key"}
		for range n {
			keys = append(keys, "Down")
		}
		if _, err := xdotool(append(keys, "Return")...); err != nil {
			t.Fatal(err)
		}
	}
	client := &http.Client{Timeout: 20 * time.Second}
	held := func() string {
		resp, err := client.Get(url + "events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		var state struct {
			Held *struct{ Command string } `json:"held"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &state); err != nil {
			t.Fatalf("the event stream: %v: %q", err, line)
		}
		if state.Held == nil {
			return ""
		}
		return state.Held.Command
	}

	req, _ := http.NewRequest("POST", url+"api/bench", strings.NewReader(`{"samples":40}`))
	req.Header.Set("Origin", origin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	poll("the bench", 90*time.Second, func() bool {
		resp, err := client.Get(url + "result?job=1")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	menu(2) // Hold at the recommended setting
	poll("the tray's hold", 15*time.Second, func() bool { return strings.HasPrefix(held(), "tickscope apply --resolution 51") })
	menu(3) // Release
	poll("the tray's release", 15*time.Second, func() bool { return held() == "" })
	menu(4) // Quit
	select {
	case err := <-done:
		exited = true
		if err != nil {
			t.Errorf("ui after the tray's Quit: %v\n%s", err, logged())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("ui still runs 20 s after the tray's Quit")
	}
}
