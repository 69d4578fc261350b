// Command screenshots regenerates the pictures in docs/screenshots with
// headless Chromium (Debian's chromium), so that anyone can see what the
// documentation shows and make it again:
//
//   - bench-1280.png and bench-390.png: the HTML report of
//     `tickscope bench --simulate narrow-band` (the model of Windows timers,
//     which the page labels SIMULATED) on a 1280 px desktop and a 390 px
//     phone, the whole page;
//   - ui-1280.png and ui-390.png: `tickscope ui --simulate narrow-band
//     --no-browser` after a bench, with its recommendation offered to hold.
//
// It builds tickscope from ./cmd/tickscope (or runs -exe), in a private
// temporary directory, and writes nothing else.
//
//	go run ./tools/screenshots [-exe PATH] [-out docs/screenshots]
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/chromedp"
)

// viewports are the widths the pictures are taken at: a desktop and a
// phone (an iPhone's 390 × 844 CSS pixels, emulated as mobile so that the
// page's viewport rule applies as it does on the phone).
var viewports = []struct {
	name          string
	width, height int64
	mobile        bool
}{
	{"1280", 1280, 800, false},
	{"390", 390, 844, true},
}

func main() {
	exe := flag.String("exe", "", "the tickscope binary (default: build ./cmd/tickscope)")
	out := flag.String("out", filepath.Join("docs", "screenshots"), "the folder the PNGs are written to")
	flag.Parse()
	if err := run(*exe, *out); err != nil {
		fmt.Fprintln(os.Stderr, "screenshots:", err)
		os.Exit(1)
	}
}

func run(exe, out string) error {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		return fmt.Errorf("no chromium on PATH (apt-get install chromium): %w", err)
	}
	dir, err := os.MkdirTemp("", "tickscope-screenshots-") // 0700: nobody else's files
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if exe == "" {
		exe = filepath.Join(dir, "tickscope")
		if msg, err := exec.Command("go", "build", "-o", exe, "./cmd/tickscope").CombinedOutput(); err != nil {
			return fmt.Errorf("building tickscope (run from the repository's root): %v\n%s", err, msg)
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}

	page := filepath.Join(dir, "bench.html")
	if msg, err := exec.Command(exe, "bench", "--simulate", "narrow-band", "--html", page).CombinedOutput(); err != nil {
		return fmt.Errorf("tickscope bench: %v\n%s", err, msg)
	}
	for _, v := range viewports {
		err := withTab(browser, dir, func(ctx context.Context) error {
			return shoot(ctx, v.width, v.height, v.mobile, "file://"+page, "svg.chart", nil, filepath.Join(out, "bench-"+v.name+".png"))
		})
		if err != nil {
			return fmt.Errorf("the bench report at %s px: %w", v.name, err)
		}
	}

	url, stop, err := startUI(exe)
	if err != nil {
		return err
	}
	defer stop()
	for i, v := range viewports {
		// One bench, run from the first page; the others show its result
		// when they load (the page fetches the last job's result).
		var act func(ctx context.Context) error
		if i == 0 {
			act = benchInUI
		}
		err := withTab(browser, dir, func(ctx context.Context) error {
			return shoot(ctx, v.width, v.height, v.mobile, url, "#current", act, filepath.Join(out, "ui-"+v.name+".png"))
		})
		if err != nil {
			return fmt.Errorf("the ui page at %s px: %w", v.name, err)
		}
	}
	return stop()
}

// withTab runs do in a fresh headless Chromium with its own profile.
func withTab(browser, dir string, do func(ctx context.Context) error) error {
	profile, err := os.MkdirTemp(dir, "profile-")
	if err != nil {
		return err
	}
	alloc, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(browser), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-first-run", true), chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(profile))
	defer cancel()
	ctx, cancel := chromedp.NewContext(alloc)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	return do(ctx)
}

// shoot loads url at the viewport's size, waits for ready to be visible,
// runs act (if any), and writes the whole page as a PNG to path.
func shoot(ctx context.Context, width, height int64, mobile bool, url, ready string, act func(context.Context) error, path string) error {
	emulate := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
	if mobile {
		emulate = append(emulate, chromedp.EmulateMobile)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, height, emulate...), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(ready))); err != nil {
		return err
	}
	if act != nil {
		if err := act(ctx); err != nil {
			return err
		}
	}
	if err := chromedp.Do(ctx, chromedp.Sleep(500*time.Millisecond)); err != nil {
		return err
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s (%d bytes)\n", path, len(png))
	return nil
}

// benchInUI runs a bench from the page, as a user would press it, and
// waits for its chart and the offer to hold its recommendation.
func benchInUI(ctx context.Context) error {
	if err := chromedp.Do(ctx, chromedp.SetValue(chromedp.CSS("#bench-samples"), "100"), chromedp.Click(chromedp.CSS("#bench-run"))); err != nil {
		return err
	}
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		shown, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`!!document.querySelector("#bench-out svg.chart") && !document.getElementById("bench-pick").hidden`))
		if err != nil {
			return err
		}
		if shown {
			return nil
		}
	}
	return errors.New("the bench in ui showed no chart and no offer to hold within 2 minutes")
}

// startUI runs `tickscope ui --simulate narrow-band --no-browser` and
// returns the address it prints and how to end it (Ctrl+C, as a user
// would).
func startUI(exe string) (string, func() error, error) {
	cmd := exec.Command(exe, "ui", "--simulate", "narrow-band", "--no-browser")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("tickscope ui after Ctrl+C: %v: %s", err, stderr.String())
			}
			return nil
		case <-time.After(15 * time.Second):
			cmd.Process.Kill()
			return errors.New("tickscope ui still ran 15 s after Ctrl+C")
		}
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		if _, url, ok := strings.Cut(lines.Text(), "tickscope ui: "); ok {
			go io.Copy(io.Discard, stdout)
			return strings.TrimSpace(url), stop, nil
		}
	}
	stop()
	return "", nil, fmt.Errorf("tickscope ui printed no address: %s", stderr.String())
}
