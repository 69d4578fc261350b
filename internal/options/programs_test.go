package options_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/options"
)

func TestPrograms(t *testing.T) {
	for _, tc := range []struct {
		value   string
		windows bool
		want    []string
		err     string // the usage error, "" for none
	}{
		{"game", false, []string{"game"}, ""},
		{"game,other", false, []string{"game", "other"}, ""},
		{"/opt/game/bin/game,steam", false, []string{"/opt/game/bin/game", "steam"}, ""},
		{"a-name-longer-than-fifteen", false, []string{"a-name-longer-than-fifteen"}, ""},
		{"Game,game", false, []string{"Game", "game"}, ""},
		{"game.exe,other.exe", true, []string{"game.exe", "other.exe"}, ""},
		{`C:\Games\My Game\game.exe`, true, []string{`C:\Games\My Game\game.exe`}, ""},
		{`c:/games/game.exe`, true, []string{`c:/games/game.exe`}, ""},
		{`\\server\share\game.exe`, true, []string{`\\server\share\game.exe`}, ""},

		{"", false, nil, `--while "": an empty list; give PROGRAM[,PROGRAM...]: a program's name or the absolute path of its executable`},
		{" ", false, nil, `--while " ": an empty list`},
		{"game,", false, nil, "--while game,: program 2 of 2 is empty (a comma too many)"},
		{",game", false, nil, "--while ,game: program 1 of 2 is empty"},
		{"a,,b", false, nil, "--while a,,b: program 2 of 3 is empty"},
		{"game,game", false, nil, "--while game,game: game is given twice; name each program once"},
		{"Game.exe,game.EXE", true, nil, "--while Game.exe,game.EXE: Game.exe and game.EXE name the same program (Windows compares names without case"},
		{"game,Game.exe", true, nil, "game and Game.exe name the same program"},
		{"game,game.exe", false, []string{"game", "game.exe"}, ""},
		{`C:\g\x.exe,c:/G/X.EXE`, true, nil, `name the same program`},
		{"game, other", false, nil, `--while "game, other": " other" starts or ends with a space`},
		{"bin/game", false, nil, "--while bin/game: bin/game is a relative path"},
		{"./game", false, nil, "is a relative path"},
		{"/opt/game/", false, nil, "--while /opt/game/: /opt/game/ ends with a separator: a directory, not a program"},
		{"/", false, nil, "ends with a separator"},
		{"/opt/../bin/game", false, nil, "holds . or .."},
		{"/opt//game", false, nil, "has an empty path element"},
		{".", false, nil, "is a directory, not a program"},
		{"..", true, nil, "is a directory, not a program"},
		{"ga\x1bme", false, nil, "holds a control character"},
		{"ga\u202eme", false, nil, "holds a control character or one that does not print"},
		{"\xff", false, nil, "is not valid UTF-8"},
		{strings.Repeat("g", 256), false, nil, "is longer than a file name can be (255 bytes)"},
		{"/" + strings.Repeat("g/", 2048) + "g", false, nil, "is longer than a path can be"},
		{`game\x.exe`, true, nil, `is a relative path`},
		{`C:game.exe`, true, nil, `holds a character Windows does not allow`},
		{`\game.exe`, true, nil, `is a relative path`},
		{`C:\Games\`, true, nil, "ends with a separator"},
		{`C:\Games\ga?me.exe`, true, nil, "holds a character Windows does not allow"},
		{"game.", true, nil, "ends with a dot"},
		{"game.exe|x", true, nil, "holds a character Windows does not allow"},
		{strings.Repeat("g,", options.MaxPrograms) + "g", false, nil, "65 programs; at most 64"},
	} {
		got, err := options.Programs("while", tc.value, tc.windows)
		if tc.err == "" {
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("Programs(%q, windows %v) = %q, %v; want %q", tc.value, tc.windows, got, err, tc.want)
			}
			continue
		}
		var usage *options.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Programs(%q, windows %v) = %q, %v; want the usage error %q", tc.value, tc.windows, got, err, tc.err)
		}
		if strings.ContainsAny(err.Error(), "\n\r\x1b") {
			t.Errorf("Programs(%q): the error %q is not one printable line", tc.value, err)
		}
	}
}

func TestProgramBase(t *testing.T) {
	for _, tc := range []struct {
		program string
		windows bool
		base    string
	}{
		{"game", false, "game"},
		{"/opt/game/bin/game", false, "game"},
		{`C:\Games\game.exe`, true, "game.exe"},
		{`C:/Games/game.exe`, true, "game.exe"},
		{`back\slash`, false, `back\slash`},
	} {
		if base := options.ProgramBase(tc.program, tc.windows); base != tc.base {
			t.Errorf("ProgramBase(%q, %v) = %q; want %q", tc.program, tc.windows, base, tc.base)
		}
	}
}

// TestProgramMatches: each OS's rules for telling a process's program
// from its short name (Windows' image name, Linux's comm) and its
// executable's path ("" when unreadable).
func TestProgramMatches(t *testing.T) {
	links := map[string]string{"/x/game": "/x/game-bin", "/x/tickscope-while-link": "/x/tickscope-while-target"}
	resolve := func(path string) (string, error) {
		if target, ok := links[path]; ok {
			return target, nil
		}
		return path, nil
	}
	for _, tc := range []struct {
		program     string
		windows     bool
		short, path string
		want        bool
	}{
		// Windows: without case, either slash; .exe added where missing.
		{"game.exe", true, "GAME.EXE", "", true},
		{"game", true, "game.exe", "", true},
		{"game", true, "Game.EXE", `C:\x\game.exe`, true},
		{"game", true, "game.bin", "", false},
		{"game.exe", true, "game", "", false},
		{`C:\Games\game.exe`, true, "game.exe", `c:\games\GAME.exe`, true},
		{`C:/Games/game.exe`, true, "game.exe", `C:\Games\game.exe`, true},
		{`C:\Games\game`, true, "game.exe", `C:\Games\game.exe`, true},
		{`C:\Games\game.exe`, true, "game.exe", `D:\game.exe`, false},
		{`C:\Games\game.exe`, true, "game.exe", "", false},
		// Linux: exactly; comm holds 15 bytes; a long name or a path is told
		// by the executable.
		{"game", false, "game", "", true},
		{"game", false, "Game", "", false},
		{"game.exe", false, "game", "", false},
		{"tickscope-while-test", false, "tickscope-while", "/opt/tickscope-while-test", true},
		{"tickscope-while-test", false, "tickscope-while", "/opt/tickscope-while-other", false},
		{"tickscope-while-test", false, "tickscope-while", "", false},
		{"/opt/game", false, "game", "/opt/game", true},
		{"/opt/game", false, "game", "/usr/game", false},
		// A link's target: its comm and its path.
		{"/x/game", false, "game-bin", "/x/game-bin", true},
		{"/x/game", false, "game", "/x/game-bin", true},
		{"/x/game", false, "game-bin", "/y/game-bin", false},
		{"/x/tickscope-while-link", false, "tickscope-while", "/x/tickscope-while-target", true},
	} {
		p := options.NewProgram(tc.program, tc.windows, resolve)
		if got := p.Matches(tc.short, tc.path); got != tc.want {
			t.Errorf("%q (windows %v) matches %q at %q: %v, want %v", tc.program, tc.windows, tc.short, tc.path, got, tc.want)
		}
	}
}

// FuzzPrograms: whatever the value, Programs returns names or a one-line
// usage error; the names it returns are non-empty, distinct, printable,
// and hold no comma.
func FuzzPrograms(f *testing.F) {
	for _, seed := range []string{"game", "a,b", "a,,b", "/opt/g", `C:\g\x.exe`, `\\s\h\x`, "x\x00y", "é,É"} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, value string, windows bool) {
		names, err := options.Programs("while", value, windows)
		if err != nil {
			var usage *options.UsageError
			if !errors.As(err, &usage) || strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("Programs(%q): %v is not a one-line usage error", value, err)
			}
			return
		}
		if len(names) == 0 || len(names) > options.MaxPrograms {
			t.Fatalf("Programs(%q) = %d names", value, len(names))
		}
		seen := map[string]bool{}
		for _, name := range names {
			if name == "" || strings.ContainsAny(name, ",\x00\n") || seen[name] {
				t.Fatalf("Programs(%q) gave %q", value, names)
			}
			seen[name] = true
			if options.ProgramBase(name, windows) == "" {
				t.Fatalf("Programs(%q): %q has no base name", value, name)
			}
		}
	})
}
