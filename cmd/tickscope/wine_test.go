package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestWine runs the real tickscope.exe under Wine (CONTRIBUTING.md,
// layer 4): testdata/wine/*.txtar in a prefix that reports Windows 7 and in
// one set to Windows 10. Wine proves plumbing, arguments, output and exit
// codes; it does not reproduce Windows timer semantics.
//
// Without Wine the test skips and says why, unless TICKSCOPE_REQUIRE_WINE=1
// (CI sets it), when a missing piece fails it.
func TestWine(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the Wine tests run on linux/amd64, not %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	w := setUpWine(t)
	for _, version := range []string{"win7", "win10"} {
		t.Run(version, func(t *testing.T) {
			base := w.prefixes[version]
			testscript.Run(t, testscript.Params{
				Dir:  "testdata/wine",
				Cmds: scriptCommands,
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
	// tickscope ui under Wine (issue 14): it starts, prints its address,
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
		if out, err := w.command(w.prefixes["win10"], w.wine, exe, "-test.count=1").CombinedOutput(); err != nil {
			t.Fatalf("precise tests under Wine: %v\n%s", err, out)
		}
	})
	// WatchResume, called past windows.NewCallback's ~2000 slots (a ui
	// holds again and again): platform's Windows test, as a test binary.
	t.Run("resume-callbacks", func(t *testing.T) {
		exe := windowsTestExe(t, "../../internal/platform")
		if out, err := w.command(w.prefixes["win10"], w.wine, exe, "-test.run", "^TestWatchResumeManyTimes$", "-test.count=1").CombinedOutput(); err != nil {
			t.Fatalf("WatchResume under Wine: %v\n%s", err, out)
		}
	})
	// The interrupt time read in a loop (who's "interrupt now" without
	// elevation): it is read and never goes back; the log says what Wine
	// gives (a count that is not tick-quantised, where Windows steps).
	t.Run("interrupt-tick", func(t *testing.T) {
		exe := windowsTestExe(t, "../../internal/platform")
		out, err := w.command(w.prefixes["win10"], w.wine, exe, "-test.run", "^TestPollInterruptTime$", "-test.count=1", "-test.v").CombinedOutput()
		if err != nil {
			t.Fatalf("the interrupt time under Wine: %v\n%s", err, out)
		}
		t.Logf("%s", out)
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
		out, err := w.command(w.prefixes["win10"], w.wine, exe, "-seconds", "0.1").CombinedOutput()
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

type wineSetup struct {
	wine     string // the wine64 loader
	exe      string // tickscope.exe
	holder   string // tickscope-holder.exe, beside it
	prefixes map[string]string
	// bin holds the `tickscope` wrapper every script finds first on PATH.
	// It is written once, before any script runs: a script writing its
	// own while parallel scripts fork could find it held open for writing
	// by a forked child and fail to run it ("text file busy").
	bin string
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
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %q %q \"$@\"\n", w.wine, w.exe)
	if err := os.Mkdir(w.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.bin, "tickscope"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
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

	// The scaffolding: the shim Go's runtime needs on Wine 8.
	shim := filepath.Join(dir, "bcryptprimitives.dll")
	if out, err := exec.Command(gcc, "-shared", "-O2", "-o", shim, "testdata/wine/bcryptprimitives.c", "-ladvapi32").CombinedOutput(); err != nil {
		t.Fatalf("building the shim: %v\n%s", err, out)
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
			w.command(prefix, w.wineserver(), "-k").Run()
		}
	})
	return w
}

func (w *wineSetup) wineserver() string { return filepath.Join(filepath.Dir(w.wine), "wineserver") }

func (w *wineSetup) command(prefix, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all")
	return cmd
}

func (w *wineSetup) bootPrefix(prefix, version, shim string) error {
	if out, err := w.command(prefix, w.wine, "wineboot", "-i").CombinedOutput(); err != nil {
		return fmt.Errorf("wineboot in %s: %v\n%s", prefix, err, out)
	}
	data, err := os.ReadFile(shim)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll"), data, 0o644); err != nil {
		return err
	}
	if version != "win7" { // a new prefix reports Windows 7
		if out, err := w.command(prefix, w.wine, "winecfg", "-v", version).CombinedOutput(); err != nil {
			return fmt.Errorf("winecfg -v %s: %v\n%s", version, err, out)
		}
	}
	// Let the prefix's wineserver write the registry and exit, so that
	// copies of the prefix are complete.
	return w.command(prefix, w.wineserver(), "-w").Run()
}

// scriptEnv gives each script its own copy of a booted prefix, so scripts
// that change its registry run in parallel without seeing one another, and
// puts a `tickscope` that runs the .exe under Wine first on PATH.
func (w *wineSetup) scriptEnv(e *testscript.Env, base string) error {
	prefix := filepath.Join(e.WorkDir, ".wineprefix")
	// Hard links keep the copy cheap (a prefix is ~700 MB of DLLs Wine
	// never writes); the registry files, which Wine does rewrite, are
	// copied for real.
	if out, err := exec.Command("cp", "-al", base, prefix).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the prefix: %v\n%s", err, out)
	}
	regs, _ := filepath.Glob(filepath.Join(base, "*.reg"))
	for _, reg := range regs {
		data, err := os.ReadFile(reg)
		if err != nil {
			return err
		}
		dst := filepath.Join(prefix, filepath.Base(reg))
		os.Remove(dst)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	e.Setenv("PATH", w.bin+string(os.PathListSeparator)+filepath.Dir(w.wine)+string(os.PathListSeparator)+e.Getenv("PATH"))
	e.Setenv("WINEPREFIX", prefix)
	e.Setenv("TICKSCOPE_EXE", w.exe)
	e.Setenv("TICKSCOPE_HOLDER_EXE", w.holder)
	// Wine maps file names through the locale's code page: UTF-8 lets
	// scripts use non-ASCII paths.
	e.Setenv("LANG", "C.UTF-8")
	e.Setenv("WINEDEBUG", "-all")
	e.Defer(func() { w.command(prefix, w.wineserver(), "-k").Run() })
	return nil
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
