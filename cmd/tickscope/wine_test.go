package main

import (
	"bytes"
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestWine runs the real tickscope.exe under Wine (CONTRIBUTING.md,
// layer 4): testdata/wine/*.txtar in a prefix set to Windows 10, and those
// of them that tell Windows 7 from it (versionScripts) in a prefix that
// reports Windows 7 too. Wine proves plumbing, arguments, output and exit
// codes; it does not reproduce Windows timer semantics.
//
// Without Wine the test skips and says why, unless TICKSCOPE_REQUIRE_WINE=1
// (CI sets it), when a missing piece fails it.
func TestWine(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the Wine tests run on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	w := setUpWine(t)
	cmds := maps.Clone(scriptCommands)
	cmds["wineflush"] = w.flush
	for _, version := range []string{"win7", "win10"} {
		t.Run(version, func(t *testing.T) {
			base := w.prefixes[version]
			dir, files := "testdata/wine", []string(nil)
			if version == "win7" {
				dir, files = "", versionScripts(t, dir)
			}
			testscript.Run(t, testscript.Params{
				Dir:   dir,
				Files: files,
				Cmds:  cmds,
				Condition: func(cond string) (bool, error) {
					switch cond {
					case "wine":
						return true, nil
					case "win10":
						return version == "win10", nil
					}
					return scriptCondition(cond)
				},
				Setup: func(e *testscript.Env) error { return w.scriptEnv(e, base) },
			})
		})
	}
	// tickscope ui under Wine: it starts, prints its address,
	// and answers on its port: the page with the token, the live state
	// from Wine's NtQueryTimerResolution, and 403 without the token.
	t.Run("ui", func(t *testing.T) { wineUI(t, w) })
	// Its tray icon, on a virtual X display (Xvfb), driven by xdotool:
	// the menu holds the bench's recommendation, releases it, and quits.
	t.Run("tray", func(t *testing.T) { wineTray(t, w) })
	// The precise library's own tests, as a Windows test binary: they time
	// with QueryPerformanceCounter, so they check the plumbing of the
	// high-resolution waitable timer and the spin under Wine.
	t.Run("precise", func(t *testing.T) {
		exe := windowsTestExe(t, "../../precise")
		if out, err := w.command(w.freshPrefix(t, "win10"), w.wine, exe, "-test.count=1").CombinedOutput(); err != nil {
			t.Fatalf("precise tests under Wine: %v\n%s", err, out)
		}
	})
	// Three of platform's Windows tests, as one test binary in one
	// prefix, as go test runs them on Windows: WatchResume called past
	// windows.NewCallback's ~2000 slots (a ui holds again and again);
	// --while's path rule, by the file (the test binary, a hard link to it
	// and a copy); and the interrupt time read in a loop (who's "interrupt
	// now" without elevation): it is read and never goes back, and the log
	// says what Wine gives (a count that is not tick-quantised, where
	// Windows steps).
	t.Run("platform", func(t *testing.T) {
		exe := windowsTestExe(t, "../../internal/platform")
		out, err := w.command(w.freshPrefix(t, "win10"), w.wine, exe, "-test.run", "^(TestWatchResumeManyTimes|TestScanTellsAPathByItsFile|TestPollInterruptTime)$", "-test.count=1", "-test.v").CombinedOutput()
		if err != nil {
			t.Fatalf("platform's Windows tests under Wine: %v\n%s", err, out)
		}
		for _, test := range []string{"TestWatchResumeManyTimes", "TestScanTellsAPathByItsFile", "TestPollInterruptTime"} {
			if !bytes.Contains(out, []byte("--- PASS: "+test+" ")) {
				t.Errorf("platform's %s did not pass under Wine:\n%s", test, out)
			}
		}
		t.Logf("%s", out)
	})
	t.Run("windows-apis", func(t *testing.T) { wineWindowsAPIs(t, w) })
	t.Run("bound", func(t *testing.T) { wineBound(t, w) })
	t.Run("session-restart", func(t *testing.T) { wineSessionRestart(t, w) })
	// The Windows bindings' own tests, as a test binary: each way a
	// binding reads a failure, the MMRESULTs, and no allocation on the
	// calls a measurement makes per sample.
	t.Run("winapi", func(t *testing.T) {
		exe := windowsTestExe(t, "../../internal/winapi")
		if out, err := w.command(w.freshPrefix(t, "win10"), w.wine, exe, "-test.count=1").CombinedOutput(); err != nil {
			t.Fatalf("winapi tests under Wine: %v\n%s", err, out)
		}
	})
	// loop-bench, as the issue asks of it on Windows: it runs (Wine's
	// figures are not Windows').
	t.Run("loop-bench", func(t *testing.T) {
		exe := filepath.Join(t.TempDir(), "loop-bench.exe")
		build := exec.Command("go", "build", "-o", exe, "../../tools/loop-bench")
		build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("building loop-bench: %v\n%s", err, out)
		}
		out, err := w.command(w.freshPrefix(t, "win10"), w.wine, exe, "-seconds", "0.1").CombinedOutput()
		if err != nil {
			t.Fatalf("loop-bench under Wine: %v\n%s", err, out)
		}
		for _, row := range []string{"hybrid           1000Hz", "precise-ticker    500Hz", "spin              500Hz", "precise: margin"} {
			if !bytes.Contains(out, []byte(row)) {
				t.Errorf("loop-bench's output lacks %q:\n%s", row, out)
			}
		}
	})
}

// versionScripts lists the scripts of dir that tell the two prefixes apart:
// those with a [win10] or [!win10] condition on a line that is not a skip
// or a stop. tickscope reads the Windows version only into query's report,
// names the release from a table (query.txtar checks both names), and
// branches on its build only at the thresholds of internal/timerinfo,
// which both prefixes' builds lie below (TestWinePrefixesBranchAlike), so
// every other script would take the same paths in Windows 7's prefix as
// in Windows 10's.
func versionScripts(t *testing.T, dir string) []string {
	paths, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	var chosen []string
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(data)) {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "[win10]")
			if !ok {
				rest, ok = strings.CutPrefix(strings.TrimSpace(line), "[!win10]")
			}
			if verb, _, _ := strings.Cut(strings.TrimSpace(rest), " "); ok && verb != "skip" && verb != "stop" {
				chosen = append(chosen, path)
				break
			}
		}
	}
	if len(chosen) == 0 {
		t.Fatalf("no script of %s has a [win10] or [!win10] condition", dir)
	}
	return chosen
}

// How long Wine may take before the harness ends it, and everything else
// running in its prefix. A Wine process that crashes or hangs must fail its
// test within minutes, never hold the suite until go test's own timeout.
const (
	// wineCommandDeadline bounds one tickscope.exe command of a script
	// (the longest, a short bench, takes under a minute on a loaded
	// machine) and each Wine command the harness runs itself.
	wineCommandDeadline = 3 * time.Minute
	// wineScriptDeadline bounds a whole script: past it the prefix's
	// wineserver is killed, which ends every Wine process of the script
	// and closes every pipe they hold.
	wineScriptDeadline = 6 * time.Minute
	// wineTestBinaryDeadline bounds a package's tests run as a Windows
	// test binary.
	wineTestBinaryDeadline = 10 * time.Minute
)

// wineDLLOverrides disables, in every Wine process the tests start:
// winedbg, the debugger Wine starts on an unhandled exception (from the
// AeDebug key, or by default when the key has no Debugger), which waits
// on the crashed process and keeps its pipes open, so that a crash hangs
// the test instead of failing it; winebrowser, so that no browser of this
// machine opens; winemenubuilder, which writes desktop entries under $HOME.
const wineDLLOverrides = "winedbg.exe=d;winebrowser.exe=d;winemenubuilder.exe=d"

type wineSetup struct {
	wine     string // the wine64 loader
	exe      string // tickscope.exe
	holder   string // tickscope-holder.exe, beside it
	crash    string // a Windows program that crashes
	prefixes map[string]string
	// bin holds the `tickscope` wrapper every script finds first on PATH.
	// It is written once, before any script runs: a script writing its
	// own while parallel scripts fork could find it held open for writing
	// by a forked child and fail to run it ("text file busy").
	bin string

	mu      sync.Mutex
	cancels []context.CancelFunc // the deadlines of the commands started
}

func setUpWine(t *testing.T) *wineSetup {
	required := os.Getenv("TICKSCOPE_REQUIRE_WINE") == "1"
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if required {
			t.Fatalf("%s (TICKSCOPE_REQUIRE_WINE=1)", msg)
		}
		t.Skipf("%s: install wine64 and gcc-mingw-w64-x86-64 to run the Wine tests", msg)
	}
	w := &wineSetup{prefixes: map[string]string{}}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, cancel := range w.cancels {
			cancel()
		}
	})
	var err error
	if w.wine, err = exec.LookPath("wine64"); err != nil {
		if _, statErr := os.Stat("/usr/lib/wine/wine64"); statErr != nil {
			missing("no wine64 on PATH or in /usr/lib/wine")
		}
		w.wine = "/usr/lib/wine/wine64"
	}
	gcc, err := exec.LookPath("x86_64-w64-mingw32-gcc")
	if err != nil {
		missing("no x86_64-w64-mingw32-gcc to build the bcryptprimitives.dll shim")
	}
	dir := t.TempDir()

	// The product: the real Windows binary, with its manifest and version
	// resource.
	w.exe = filepath.Join(dir, "tickscope.exe")
	build := exec.Command("go", "build", "-o", w.exe, ".")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tickscope.exe: %v\n%s", err, out)
	}
	checkResources(t, w.exe)
	w.bin = filepath.Join(dir, "bin")
	// The scripts' tickscope and wine64 are the bounded Wine command of
	// this test binary (wineBounded, tickscope-wine on the scripts' PATH):
	// a command that hangs, or leaves a Wine process holding its output,
	// ends at its deadline with every Wine process of the prefix, and the
	// script fails saying what was left. TICKSCOPE_WINE_DEADLINE (seconds)
	// sets the deadline; TICKSCOPE_WINE is Wine's loader itself, for a
	// script that must signal the Windows program's own process.
	if err := os.Mkdir(w.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, wrapper := range map[string]string{
		"tickscope": fmt.Sprintf("#!/bin/sh\nexec tickscope-wine %q %q \"$@\"\n", w.wine, w.exe),
		"wine64":    fmt.Sprintf("#!/bin/sh\nexec tickscope-wine %q \"$@\"\n", w.wine),
	} {
		if err := os.WriteFile(filepath.Join(w.bin, name), []byte(wrapper), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The windowless holder apply --persist registers: the same program
	// linked for the GUI subsystem, beside tickscope.exe as the release
	// ships it.
	w.holder = filepath.Join(dir, "tickscope-holder.exe")
	build = exec.Command("go", "build", "-ldflags=-H=windowsgui", "-o", w.holder, ".")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building tickscope-holder.exe: %v\n%s", err, out)
	}

	// The scaffolding: the shim Go's runtime needs on Wine 8, and a
	// program that crashes (crash.txtar checks what a crash does).
	shim := filepath.Join(dir, "bcryptprimitives.dll")
	if out, err := exec.Command(gcc, "-shared", "-O2", "-o", shim, "testdata/wine/bcryptprimitives.c", "-ladvapi32").CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
	}
	w.crash = filepath.Join(dir, "crash.exe")
	if out, err := exec.Command(gcc, "-O0", "-o", w.crash, "testdata/wine/crash.c").CombinedOutput(); err != nil {
		t.Fatalf("building crash.exe: %v\n%s", err, out)
	}

	// Two prefixes, booted side by side (each takes several seconds).
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for _, version := range []string{"win7", "win10"} {
		prefix := filepath.Join(dir, "prefix-"+version)
		w.prefixes[version] = prefix
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- w.bootPrefix(prefix, version, shim)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, prefix := range w.prefixes {
			w.killServer(prefix)
		}
	})
	return w
}

func (w *wineSetup) wineserver() string { return filepath.Join(filepath.Dir(w.wine), "wineserver") }

// env is the environment of a Wine command in prefix.
//
// TMPDIR is the prefix's own (prefixTmp): Debian's Wine keeps its server's
// socket in a directory it makes under TMPDIR and names it in the prefix,
// so a Wine command whose TMPDIR differs does not find the prefix's running
// wineserver and starts a second one on the same prefix, with a second
// session (wineboot --init, services.exe, ...) and a second registry that
// overwrites the first's. Every Wine command of a prefix, the harness's
// and the scripts' alike (testscript's TMPDIR is $WORK/.tmp, beside the
// script's $WORK/.wineprefix), has the same TMPDIR.
//
// LANG as the scripts have it: Wine maps file names through the locale's
// code page, and the session's processes must map them as the commands
// they serve do.
func (w *wineSetup) env(prefix string) []string {
	return append(os.Environ(), "WINEPREFIX="+prefix, "TMPDIR="+prefixTmp(prefix), "WINEDEBUG=-all", "WINEDLLOVERRIDES="+wineDLLOverrides, "LANG=C.UTF-8")
}

// prefixTmp is the TMPDIR of every Wine command in prefix: .tmp beside it,
// which is where testscript puts a script's TMPDIR.
func prefixTmp(prefix string) string { return filepath.Join(filepath.Dir(prefix), ".tmp") }

// command returns a Wine command in prefix, bounded twice: past
// wineTestBinaryDeadline it is killed together with every Wine process of
// the prefix (its wineserver), and once it has ended Wait returns within
// 10 s even if a Wine process it started still holds its output pipes.
func (w *wineSetup) command(prefix, name string, args ...string) *exec.Cmd {
	return w.commandWithin(wineTestBinaryDeadline, prefix, name, args...)
}

func (w *wineSetup) commandWithin(deadline time.Duration, prefix, name string, args ...string) *exec.Cmd {
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	w.mu.Lock()
	w.cancels = append(w.cancels, cancel)
	w.mu.Unlock()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = w.env(prefix)
	cmd.Cancel = func() error {
		fmt.Fprintf(os.Stderr, "wine: %s still ran after %v: killing it and the wineserver of %s\n", filepath.Base(name), deadline, prefix)
		err := cmd.Process.Kill()
		w.killServer(prefix)
		return err
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// killServer ends prefix's wineserver and every Wine process running
// there, those the server no longer knows included.
func (w *wineSetup) killServer(prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kill := exec.CommandContext(ctx, w.wineserver(), "-k")
	kill.Env = w.env(prefix)
	kill.WaitDelay = 5 * time.Second
	kill.Run()
	w.signalPrefix(prefix, syscall.SIGKILL, func(string) bool { return true })
}

func (w *wineSetup) bootPrefix(prefix, version, shim string) error {
	// Wine's output goes to a log file, never a pipe: the processes of
	// Wine's session (services.exe, winedevice.exe, explorer.exe) started
	// by this boot inherit it and outlive the command.
	if err := os.MkdirAll(prefixTmp(prefix), 0o700); err != nil {
		return err
	}
	log, err := os.Create(prefix + ".log")
	if err != nil {
		return err
	}
	defer log.Close()
	run := func(name string, args ...string) error {
		cmd := w.commandWithin(wineCommandDeadline, prefix, name, args...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			data, _ := os.ReadFile(log.Name())
			return fmt.Errorf("%s %s in %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), prefix, err, data)
		}
		return nil
	}
	if err := run(w.wine, "wineboot", "-i"); err != nil {
		return err
	}
	data, err := os.ReadFile(shim)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll"), data, 0o644); err != nil {
		return err
	}
	// The automatic debugger off in the prefix itself too (the AeDebug
	// key), for Wine processes started without wineDLLOverrides: a crash
	// then ends the process, and Wine prints what crashed where.
	const aeDebug = `HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug`
	if err := run(w.wine, "reg", "add", aeDebug, "/v", "Auto", "/t", "REG_SZ", "/d", "0", "/f"); err != nil {
		return err
	}
	if err := run(w.wine, "reg", "add", aeDebug, "/v", "Debugger", "/t", "REG_SZ", "/d", "tickscope-tests-no-debugger", "/f"); err != nil {
		return err
	}
	if version != "win7" { // a new prefix reports Windows 7
		if err := run(w.wine, "winecfg", "-v", version); err != nil {
			return err
		}
	}
	// Let the prefix's wineserver write the registry and exit, so that
	// copies of the prefix are complete.
	return run(w.wineserver(), "-w")
}

// copyPrefix makes dst a copy of the booted prefix base. Hard links keep
// the copy cheap (a prefix is ~700 MB of DLLs Wine never writes); the
// registry files, which Wine does rewrite, are copied for real.
func copyPrefix(base, dst string) error {
	if out, err := exec.Command("cp", "-al", base, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the prefix: %v\n%s", err, out)
	}
	regs, _ := filepath.Glob(filepath.Join(base, "*.reg"))
	for _, reg := range regs {
		data, err := os.ReadFile(reg)
		if err != nil {
			return err
		}
		dst := filepath.Join(dst, filepath.Base(reg))
		os.Remove(dst)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// startSession starts prefix's wineserver, kept running until it is
// killed (-p), and Wine's session processes (services.exe, winedevice.exe,
// explorer.exe, ...), with their output appended to log. Started by a
// command's first Wine process instead, they would inherit that command's
// pipes and outlive it, and a crash among them (winedevice.exe crashes now
// and then as a short-lived session shuts down) could hold the test's
// pipes open. Once started, they serve every later command of the test,
// which also saves each command a session's start and shutdown.
//
// A start fails now and then on a loaded machine (seen once in a full
// run: "ShellExecuteEx failed: Internal error" for cmd): it is tried a
// second time, after the prefix's Wine processes are ended, and the first
// failure stays in the log.
func (w *wineSetup) startSession(prefix, log string, extraEnv ...string) error {
	err := w.tryStartSession(prefix, log, extraEnv...)
	if err != nil {
		w.killServer(prefix)
		err = w.tryStartSession(prefix, log, extraEnv...)
	}
	return err
}

func (w *wineSetup) tryStartSession(prefix, log string, extraEnv ...string) error {
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, args := range [][]string{{w.wineserver(), "-p"}, {w.wine, `C:\windows\system32\cmd.exe`, "/c", "exit"}} {
		cmd := w.commandWithin(wineCommandDeadline, prefix, args[0], args[1:]...)
		cmd.Env = append(cmd.Env, extraEnv...)
		cmd.Stdout, cmd.Stderr = f, f
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(f, "tickscope tests: %s: %v\n", strings.Join(args, " "), err)
			data, _ := os.ReadFile(log)
			return fmt.Errorf("starting Wine's session in %s (%s): %v\n%s", prefix, strings.Join(args, " "), err, data)
		}
	}
	return nil
}

// freshPrefix gives a test its own copy of a booted prefix with Wine's
// session started (extraEnv, such as DISPLAY, is the session's), ended
// with the test; what Wine's session processes printed is logged when the
// test fails or one of them crashed.
func (w *wineSetup) freshPrefix(t *testing.T, version string, extraEnv ...string) string {
	t.Helper()
	dir := t.TempDir()
	prefix := filepath.Join(dir, ".wineprefix")
	if err := copyPrefix(w.prefixes[version], prefix); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(prefixTmp(prefix), 0o700); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "wine-session.log")
	if err := w.startSession(prefix, log, extraEnv...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.killServer(prefix)
		if data, _ := os.ReadFile(log); t.Failed() || wineCrashed(data) {
			t.Logf("Wine's session log:\n%s", data)
		}
	})
	return prefix
}

// wineCrashed tells whether Wine reported an unhandled exception (its
// line for it begins "wine: Unhandled").
func wineCrashed(log []byte) bool { return bytes.Contains(log, []byte("wine: Unhandled")) }

// scriptEnv gives each script its own copy of a booted prefix with Wine's
// session started, so scripts that change its registry run in parallel
// without seeing one another, and puts a `tickscope` that runs the .exe
// under Wine first on PATH. A script still running after
// wineScriptDeadline has its wineserver killed, which ends it.
func (w *wineSetup) scriptEnv(e *testscript.Env, base string) error {
	prefix := filepath.Join(e.WorkDir, ".wineprefix")
	if got := e.Getenv("TMPDIR"); got != prefixTmp(prefix) {
		return fmt.Errorf("the script's TMPDIR is %s, not %s: Wine would start a second server for its prefix", got, prefixTmp(prefix))
	}
	if err := copyPrefix(base, prefix); err != nil {
		return err
	}
	log := filepath.Join(e.WorkDir, ".wine-session.log")
	if err := w.startSession(prefix, log); err != nil {
		return err
	}
	watchdog := time.AfterFunc(wineScriptDeadline, func() {
		var b strings.Builder
		fmt.Fprintf(&b, "the script still ran after %v: every Wine process of its prefix is killed:\n", wineScriptDeadline)
		for _, p := range prefixProcesses(filepath.Dir(w.wine), prefix) {
			b.WriteString(describeProcess(p.pid, false))
		}
		os.WriteFile(filepath.Join(e.WorkDir, wineOverranName), []byte(b.String()), 0o644)
		w.killServer(prefix)
	})
	e.Setenv("PATH", w.bin+string(os.PathListSeparator)+filepath.Dir(w.wine)+string(os.PathListSeparator)+e.Getenv("PATH"))
	e.Setenv("WINEPREFIX", prefix)
	e.Setenv("TICKSCOPE_EXE", w.exe)
	e.Setenv("TICKSCOPE_WINE", w.wine)
	e.Setenv("TICKSCOPE_HOLDER_EXE", w.holder)
	// Where the bound lists the commands Wine failed to start (.ci/run's
	// file, printed at the end of the run).
	e.Setenv("TICKSCOPE_WINE_NOT_STARTED", os.Getenv("TICKSCOPE_WINE_NOT_STARTED"))
	e.Setenv("CRASH_EXE", w.crash)
	// Wine maps file names through the locale's code page: UTF-8 lets
	// scripts use non-ASCII paths.
	e.Setenv("LANG", "C.UTF-8")
	e.Setenv("WINEDEBUG", "-all")
	e.Setenv("WINEDLLOVERRIDES", wineDLLOverrides)
	e.Defer(func() {
		watchdog.Stop()
		w.killServer(prefix)
		if data, _ := os.ReadFile(log); wineCrashed(data) || bytes.Contains(data, []byte("tickscope tests:")) {
			e.T().Log("Wine's session log:\n" + string(data))
		}
		// A command that overran its deadline fails the script, whatever
		// the script expected of it (a `! exec` too).
		if data, err := os.ReadFile(filepath.Join(e.WorkDir, wineOverranName)); err == nil {
			e.T().Fatal("a Wine command overran its deadline: " + string(data))
		}
	})
	return nil
}

// flush (the scripts' wineflush) has Wine write the registry to the
// prefix's .reg files: it ends the script's wineserver with SIGTERM, on
// which the server writes the registry and exits (wineserver -k may end
// it with SIGKILL, which writes nothing, when it is slow to exit), ends
// the session's processes, and starts the session again. Nothing else of
// the script may run in Wine meanwhile.
func (w *wineSetup) flush(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: wineflush")
	}
	prefix := ts.Getenv("WINEPREFIX")
	w.signalPrefix(prefix, syscall.SIGTERM, func(exe string) bool { return strings.HasPrefix(filepath.Base(exe), "wineserver") })
	w.killServer(prefix)
	ts.Check(w.startSession(prefix, filepath.Join(ts.Getenv("WORK"), ".wine-session.log")))
}

// wineBound holds the scripts' bounded Wine command to its promise: a
// command that runs past its deadline, or that leaves behind a Wine
// process holding its output, ends within seconds of the deadline with
// every Wine process of its prefix, says what was left running, exits 124
// and records the overrun, so that the script's later Wine commands do not
// run and the script fails.
func wineBound(t *testing.T, w *wineSetup) {
	bounded, err := exec.LookPath("tickscope-wine")
	if err != nil {
		t.Fatal(err)
	}
	const deadline = 5 * time.Second
	cases := []struct {
		name string
		args []string
		said string
	}{
		{"hangs", []string{w.wine, w.exe, "apply", "--ms", "1", "--no-esc", "--for", "120s"},
			"still ran after 5s: killed with every Wine process of its prefix"},
		// cmd's start /b runs the hold in the background with cmd's own
		// output, and cmd exits at once.
		{"leaves-a-process", []string{w.wine, `C:\windows\system32\cmd.exe`, "/c", "start", "/b", "/unix", w.exe, "apply", "--ms", "1", "--no-esc", "--for", "120s"},
			"exited, but a process it started still held its output 5s later"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := w.freshPrefix(t, "win10")
			work := t.TempDir()
			// A backstop only: what is tested is the command's own bound.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, bounded, c.args...)
			cmd.Env = append(w.env(prefix), "WORK="+work, fmt.Sprintf("TICKSCOPE_WINE_DEADLINE=%d", int(deadline.Seconds())))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			started := time.Now()
			err := cmd.Run()
			took := time.Since(started)
			if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 124 {
				t.Fatalf("exit %v after %v, want 124\nstdout:\n%s\nstderr:\n%s", err, took, stdout.String(), stderr.String())
			}
			// The deadline, the report (a backtrace of each process the
			// command started) and the kill: well within a minute.
			if took > deadline+time.Minute {
				t.Errorf("it took %v to end a command whose deadline was %v", took, deadline)
			}
			if !strings.Contains(stderr.String(), c.said) || !strings.Contains(stderr.String(), "tickscope.exe") {
				t.Errorf("stderr does not say %q of tickscope.exe:\n%s", c.said, stderr.String())
			}
			if left := prefixProcesses(filepath.Dir(w.wine), prefix); len(left) > 0 {
				t.Errorf("Wine processes of the prefix still run: %v", left)
			}
			record, err := os.ReadFile(filepath.Join(work, wineOverranName))
			if err != nil || !strings.Contains(string(record), c.said) {
				t.Errorf("the overrun's record: %q, %v", record, err)
			}
			// The script's next Wine command does not run.
			next := exec.Command(bounded, w.wine, w.exe, "query")
			next.Env = cmd.Env
			out, err := next.CombinedOutput()
			if next.ProcessState == nil || next.ProcessState.ExitCode() != 125 || !strings.Contains(string(out), "not run, an earlier Wine command of this script overran") {
				t.Errorf("the next command after an overrun: %v\n%s", err, out)
			}
		})
	}
}

// wineSessionRestart holds the bounded command to its other promise: a
// command that finds its prefix without Wine's session (ended, or never
// started) does not start the session itself, whose processes would hold
// the command's output open after it exits; the bound starts it first,
// with its output in the session's log, and says so there.
func wineSessionRestart(t *testing.T, w *wineSetup) {
	bounded, err := exec.LookPath("tickscope-wine")
	if err != nil {
		t.Fatal(err)
	}
	prefix := w.freshPrefix(t, "win10")
	w.killServer(prefix)
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bounded, w.wine, w.exe, "query")
	cmd.Env = append(w.env(prefix), "WORK="+work)
	var stdout, stderr bytes.Buffer
	// A pipe, as a script's capture is, so that the bound copies it.
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "timer") {
		t.Errorf("query printed:\n%s", stdout.String())
	}
	log, _ := os.ReadFile(filepath.Join(work, ".wine-session.log"))
	if !strings.Contains(string(log), "the session ran: false; starting them") {
		t.Errorf("the session's log does not say the session was started:\n%s", log)
	}
	if strings.Contains(string(log), "only Wine's session held its output") {
		t.Errorf("the command started the session itself:\n%s", log)
	}
	if _, err := os.Stat(filepath.Join(work, wineOverranName)); err == nil {
		t.Error("the bound recorded an overrun")
	}
	if _, session := sessionState(filepath.Dir(w.wine), prefix); !session {
		t.Error("Wine's session does not run after the command")
	}
}

// checkResources looks for the manifest's Windows 10 compatibility entry,
// asInvoker and the version resource in the built binary.
func checkResources(t *testing.T, exe string) {
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range [][]byte{
		[]byte(`<supportedOS Id="{8e0f7a12-bfb3-4fe8-b9a5-48fd50a15a9a}"/>`), // Windows 10 and 11
		[]byte(`level="asInvoker"`),
		utf16("VS_VERSION_INFO"),
		utf16("tickscope.exe"),
	} {
		if !bytes.Contains(data, want) {
			t.Errorf("tickscope.exe lacks %q: regenerate the resources with go generate ./cmd/tickscope", want)
		}
	}
}

func utf16(s string) []byte {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), 0)
	}
	return b
}

// windowsTestExe builds the tests of the package at dir as a Windows test
// binary, to run under Wine.
func windowsTestExe(t *testing.T, dir string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), filepath.Base(dir)+".test.exe")
	build := exec.Command("go", "test", "-c", "-o", exe, dir)
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the tests of %s: %v\n%s", dir, err, out)
	}
	return exe
}

// TestWinePrefixesBranchAlike holds versionScripts' reason: the builds the
// two prefixes report (query.txtar checks them) lie on the same side of
// every build threshold tickscope branches on, internal/timerinfo's
// Build constants.
func TestWinePrefixesBranchAlike(t *testing.T) {
	const windows7, windows10 = 7601, 18362
	paths, err := filepath.Glob("../../internal/timerinfo/*.go")
	if err != nil {
		t.Fatal(err)
	}
	thresholds := 0
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !buildConst.MatchString(name.Name) {
					continue
				}
				var lit *ast.BasicLit
				if i < len(vs.Values) {
					lit, _ = vs.Values[i].(*ast.BasicLit)
				}
				if lit == nil || lit.Kind != token.INT {
					t.Fatalf("timerinfo.%s is not a plain number: read its value here", name.Name)
				}
				build, err := strconv.Atoi(lit.Value)
				if err != nil {
					t.Fatal(err)
				}
				thresholds++
				if (windows7 >= build) != (windows10 >= build) {
					t.Errorf("timerinfo.%s = %d lies between the prefixes' builds %d and %d: the Windows 7 prefix must run every script again (versionScripts)", name.Name, build, windows7, windows10)
				}
			}
			return false
		})
	}
	if thresholds == 0 {
		t.Fatal("internal/timerinfo declares no Build constant: where are the build thresholds now?")
	}
}

var buildConst = regexp.MustCompile(`^Build[0-9]+$`)
