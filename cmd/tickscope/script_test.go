package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/tickscope/tickscope/internal/platform"
	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/testlock"
	"github.com/tickscope/tickscope/internal/watch"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"tickscope": func() { os.Exit(run(os.Args[1:])) },
		// The Wine scripts' bounded Wine command (wine_test.go).
		"tickscope-wine": func() { os.Exit(wineBounded(os.Args[1:])) },
	})
}

// TestScripts runs the command line as a user types it, on this machine:
// testdata/script/*.txtar, each a shell session with its expected output.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:       "testdata/script",
		Cmds:      scriptCommands,
		Condition: scriptCondition,
		// Each script keeps its locks in a directory of its own, not in
		// root's /run/tickscope: scripts run side by side, and so may
		// other runs of the tests on this machine.
		Setup: func(e *testscript.Env) error {
			e.Setenv(platform.RuntimeDirEnv, filepath.Join(e.WorkDir, ".run"))
			return nil
		},
	})
}

// scriptCommands are the checks testscript lacks.
var scriptCommands = map[string]func(ts *testscript.TestScript, neg bool, args []string){
	// exits CODE PROG ARGS...: run PROG and require exit code CODE; its
	// output is then checked with stdout and stderr as usual.
	"exits": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 2 {
			ts.Fatalf("usage: exits CODE PROG [ARGS...]")
		}
		want, err := strconv.Atoi(args[0])
		ts.Check(err)
		err = ts.Exec(args[1], args[2:]...)
		got := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			got = exitErr.ExitCode()
		} else if err != nil {
			ts.Fatalf("%s: %v", args[1], err)
		}
		if got != want {
			ts.Fatalf("%s exited %d, want %d", strings.Join(args[1:], " "), got, want)
		}
	},
	// json FILE PATH [VALUE]: FILE (or stdout) is JSON with a value at the
	// dotted PATH, equal to VALUE when given (compared as JSON text), or at
	// least N when VALUE is ">=N", at most N when it is "<=N", at most the
	// number at the dotted OTHER when it is "<=@OTHER". A PATH written
	// ?PATH is a number the writer leaves out when it is 0 (omitempty),
	// so absent counts as 0.
	"json": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 2 || len(args) > 3 {
			ts.Fatalf("usage: json FILE|stdout PATH [VALUE]")
		}
		data := ts.ReadFile(args[0])
		var doc any
		if err := json.Unmarshal([]byte(data), &doc); err != nil {
			ts.Fatalf("%s is not JSON: %v", args[0], err)
		}
		path, zeroIfAbsent := strings.CutPrefix(args[1], "?")
		v, ok := lookup(doc, path)
		if !ok && zeroIfAbsent {
			v, ok = 0.0, true
		}
		if len(args) == 3 && ok {
			text, _ := json.Marshal(v)
			if least, isMin := strings.CutPrefix(args[2], ">="); isMin {
				n, isNum := v.(float64)
				limit, err := strconv.ParseFloat(least, 64)
				ts.Check(err)
				ok = isNum && n >= limit
			} else if other, isOther := strings.CutPrefix(args[2], "<=@"); isOther {
				n, isNum := v.(float64)
				limit, found := lookup(doc, other)
				m, otherNum := limit.(float64)
				ok = isNum && found && otherNum && n <= m
			} else if most, isMax := strings.CutPrefix(args[2], "<="); isMax {
				n, isNum := v.(float64)
				limit, err := strconv.ParseFloat(most, 64)
				ts.Check(err)
				ok = isNum && n <= limit
			} else {
				ok = string(text) == args[2]
			}
			if !ok && !neg {
				ts.Fatalf("%s: %s is %s, want %s", args[0], args[1], text, args[2])
			}
		}
		if ok == neg {
			ts.Fatalf("%s: path %s present=%v, want %v", args[0], args[1], ok, !neg)
		}
	},
	// jsonitem FILE PATH KEY=VALUE...: the array at the dotted PATH of
	// FILE's JSON (or stdout) has an element whose keys have those values
	// (compared as JSON text); a VALUE @NAME is the trimmed content of the
	// file NAME (a process id a background command wrote).
	"jsonitem": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) < 3 {
			ts.Fatalf("usage: jsonitem FILE|stdout PATH KEY=VALUE...")
		}
		var doc any
		if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &doc); err != nil {
			ts.Fatalf("%s is not JSON: %v", args[0], err)
		}
		v, _ := lookup(doc, args[1])
		items, _ := v.([]any)
		found := slices.ContainsFunc(items, func(item any) bool {
			for _, pair := range args[2:] {
				key, want, _ := strings.Cut(pair, "=")
				if name, isFile := strings.CutPrefix(want, "@"); isFile {
					want = strings.TrimSpace(ts.ReadFile(name))
				}
				got, ok := lookup(item, key)
				text, _ := json.Marshal(got)
				if !ok || string(text) != want {
					return false
				}
			}
			return true
		})
		if found == neg {
			ts.Fatalf("%s: %s has an element with %v: %v, want %v\n%s", args[0], args[1], args[2:], found, !neg, ts.ReadFile(args[0]))
		}
	},
	// cmp-latencies A B: two raw files hold the same samples.
	"cmp-latencies": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: cmp-latencies A B")
		}
		a, err := rawfile.ReadFile(context.Background(), ts.MkAbs(args[0]), rawLimits())
		ts.Check(err)
		b, err := rawfile.ReadFile(context.Background(), ts.MkAbs(args[1]), rawLimits())
		ts.Check(err)
		same := len(a.Points) == len(b.Points)
		for i := 0; same && i < len(a.Points); i++ {
			same = slices.Equal(a.Points[i].Latencies, b.Points[i].Latencies)
		}
		if same == neg {
			ts.Fatalf("%s and %s: same samples %v", args[0], args[1], same)
		}
	},
	// jsonsame A B: two JSON files are equal but for a top-level
	// "raw_file" (where a bench wrote its samples).
	"jsonsame": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 2 {
			ts.Fatalf("usage: jsonsame A B")
		}
		var docs [2]map[string]any
		for i, name := range args {
			ts.Check(json.Unmarshal([]byte(ts.ReadFile(name)), &docs[i]))
			delete(docs[i], "raw_file")
		}
		a, _ := json.Marshal(docs[0])
		b, _ := json.Marshal(docs[1])
		if (string(a) == string(b)) == neg {
			ts.Fatalf("%s and %s: equal %v", args[0], args[1], !neg)
		}
	},
	// dma-latency VALUE [WITHIN]: /dev/cpu_dma_latency reads VALUE (µs)
	// within WITHIN (a duration, 5s when not given); with !, reads anything
	// else within it. It reads the kernel's aggregate request, so it needs
	// root.
	"dma-latency": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 1 && len(args) != 2 {
			ts.Fatalf("usage: [!] dma-latency VALUE [WITHIN]")
		}
		want, err := strconv.ParseInt(args[0], 10, 32)
		ts.Check(err)
		within := 5 * time.Second
		if len(args) == 2 {
			within, err = time.ParseDuration(args[1])
			ts.Check(err)
		}
		var got int32
		for deadline := time.Now().Add(within); ; time.Sleep(20 * time.Millisecond) {
			data, err := os.ReadFile("/dev/cpu_dma_latency")
			ts.Check(err)
			if len(data) != 4 {
				ts.Fatalf("/dev/cpu_dma_latency gave %d bytes", len(data))
			}
			got = int32(binary.NativeEndian.Uint32(data))
			if (int64(got) == want) != neg || time.Now().After(deadline) {
				break
			}
		}
		if (int64(got) == want) == neg {
			ts.Fatalf("/dev/cpu_dma_latency reads %d after %v; want %s%d", got, within, map[bool]string{true: "not ", false: ""}[neg], want)
		}
	},
	// exclusive NAME: the rest of this script runs while no other test,
	// in this process or another, holds NAME (internal/testlock). Scripts
	// that hold or read /dev/cpu_dma_latency take "dma-latency": the kernel
	// applies the smallest request of all processes.
	"exclusive": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 1 {
			ts.Fatalf("usage: exclusive NAME")
		}
		release, err := testlock.Lock(args[0])
		ts.Check(err)
		ts.Defer(release)
	},
	// waitgrep PATTERN FILE: waits, up to a minute, until a line of FILE
	// matches the regular expression PATTERN, so that a script can wait
	// for what a background command has done instead of sleeping.
	"waitgrep": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) != 2 {
			ts.Fatalf("usage: waitgrep PATTERN FILE")
		}
		re, err := regexp.Compile("(?m)" + args[0])
		ts.Check(err)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if data, err := os.ReadFile(ts.MkAbs(args[1])); err == nil && re.Match(data) {
				return
			}
		}
		ts.Fatalf("no line of %s matches %s after a minute", args[1], args[0])
	},
	// jsonlines FILE MIN [EVENT...]: every line of FILE is a watch event
	// (decoded strictly as watch.Event, the type docs/json.md documents),
	// at least MIN of them, and each EVENT kind is among them.
	"jsonlines": func(ts *testscript.TestScript, neg bool, args []string) {
		if neg || len(args) < 2 {
			ts.Fatalf("usage: jsonlines FILE MIN [EVENT...]")
		}
		least, err := strconv.Atoi(args[1])
		ts.Check(err)
		seen := map[string]bool{}
		lines := strings.Split(strings.TrimSuffix(ts.ReadFile(args[0]), "\n"), "\n")
		for i, line := range lines {
			dec := json.NewDecoder(strings.NewReader(line))
			dec.DisallowUnknownFields()
			var e watch.Event
			if err := dec.Decode(&e); err != nil || e.Time.IsZero() || e.Event == "" {
				ts.Fatalf("%s line %d of %d does not parse as an event (%v): %q", args[0], i+1, len(lines), err, line)
			}
			seen[e.Event] = true
		}
		if len(lines) < least {
			ts.Fatalf("%s has %d lines, want at least %d", args[0], len(lines), least)
		}
		for _, kind := range args[2:] {
			if !seen[kind] {
				ts.Fatalf("%s has no %s event", args[0], kind)
			}
		}
	},
	// rawfile FILE POINTS SAMPLES: FILE is a valid raw-samples file with
	// that many points of that many samples each.
	"rawfile": func(ts *testscript.TestScript, neg bool, args []string) {
		if len(args) != 3 {
			ts.Fatalf("usage: rawfile FILE POINTS SAMPLES")
		}
		f, err := rawfile.ReadFile(context.Background(), ts.MkAbs(args[0]), rawLimits())
		if neg {
			if err == nil {
				ts.Fatalf("%s is a valid raw file", args[0])
			}
			return
		}
		ts.Check(err)
		points, _ := strconv.Atoi(args[1])
		samples, _ := strconv.Atoi(args[2])
		if len(f.Points) != points {
			ts.Fatalf("%d points, want %d", len(f.Points), points)
		}
		for i, p := range f.Points {
			if len(p.Latencies) != samples {
				ts.Fatalf("point %d has %d samples, want %d", i, len(p.Latencies), samples)
			}
		}
	},
}

// lookup follows a dotted path ("summary.p50_ns", "points.0") into decoded
// JSON.
func lookup(doc any, path string) (any, bool) {
	for _, key := range strings.Split(path, ".") {
		switch node := doc.(type) {
		case map[string]any:
			v, ok := node[key]
			if !ok {
				return nil, false
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(node) {
				return nil, false
			}
			doc = node[i]
		default:
			return nil, false
		}
	}
	return doc, true
}

func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "root":
		return os.Geteuid() == 0, nil
	case "systemd":
		fi, err := os.Stat("/run/systemd/system")
		return err == nil && fi.IsDir(), nil
	case "prometheus":
		return prometheusCondition()
	case "wine", "win10":
		// Set by TestWine's runs; never true for the native scripts.
		return false, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}
