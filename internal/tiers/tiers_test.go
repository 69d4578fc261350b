package tiers

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/tickscope/tickscope/"

// pending are the arrows that break the rule today, each to be removed
// from here when the code stops drawing it; the test fails on an arrow
// that is not listed, and on one listed that the code no longer draws,
// so the list only shrinks.
var pending = []string{}

// pkg is one package of the module as go list reports it.
type pkg struct {
	path    string   // inside the module
	imports []string // direct, inside the module
	deps    []string // transitive, every module
}

// listPackages is the module's packages, built for goos.
func listPackages(t *testing.T, goos string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", module+"...")
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
	if goos == "darwin" {
		cmd.Env = append(cmd.Env, "GOARCH=arm64")
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v", goos, err)
	}
	var pkgs []pkg
	for line := range strings.Lines(string(out)) {
		fields := strings.Split(strings.TrimRight(line, "\n"), "\t")
		if len(fields) != 3 {
			t.Fatalf("go list gave %q", line)
		}
		p := pkg{path: strings.TrimPrefix(fields[0], module), deps: strings.Fields(fields[2])}
		for _, imp := range strings.Fields(fields[1]) {
			if rest, ok := strings.CutPrefix(imp, module); ok {
				p.imports = append(p.imports, rest)
			}
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// tierOf is path's tier, and whether the table names it.
func tierOf(path string) (Tier, bool) {
	if tier, ok := Of[path]; ok {
		return tier, true
	}
	for prefix, tier := range Of {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(path, prefix) {
			return tier, true
		}
	}
	return 0, false
}

// arrows are the imports that break the rule, as "from -> to (why)", and
// the packages the table does not name.
func arrows(pkgs []pkg) (broken, unnamed []string) {
	for _, p := range pkgs {
		from, ok := tierOf(p.path)
		if !ok {
			unnamed = append(unnamed, p.path)
			continue
		}
		for _, imp := range p.imports {
			to, ok := tierOf(imp)
			switch {
			case !ok:
				// Reported as unnamed on its own line.
			case to > from:
				broken = append(broken, fmt.Sprintf("%s -> %s (%s imports %s)", p.path, imp, from, to))
			case to == UseCase && from == UseCase:
				broken = append(broken, fmt.Sprintf("%s -> %s (a use case imports another)", p.path, imp))
			}
		}
		if p.path == CommandLine || strings.HasPrefix(p.path, "tools/") {
			continue
		}
		for _, dep := range p.deps {
			if slices.Contains(CommandLineParsers, dep) {
				broken = append(broken, fmt.Sprintf("%s -> %s (only %s links the command-line parser)", p.path, dep, CommandLine))
			}
		}
	}
	return broken, unnamed
}

// TestTiers holds the import graph to the tiers, on every OS tickscope
// ships (the OS files import differently).
func TestTiers(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of the module for three OSes")
	}
	seen := map[string]bool{}
	for _, goos := range []string{"linux", "windows", "darwin"} {
		broken, unnamed := arrows(listPackages(t, goos))
		for _, p := range unnamed {
			t.Errorf("%s: package %s has no tier: add it to tiers.Of and to CONTRIBUTING.md's layout", goos, p)
		}
		for _, a := range broken {
			if !seen[a] && !slices.Contains(pending, a) {
				t.Errorf("%s: %s", goos, a)
			}
			seen[a] = true
		}
	}
	for _, a := range pending {
		if !seen[a] {
			t.Errorf("%s is listed as pending but no longer drawn: remove it from pending", a)
		}
	}
}

// TestArrows checks the rule itself on a graph made up for it.
func TestArrows(t *testing.T) {
	pkgs := []pkg{
		{path: "internal/stats"},
		{path: "internal/rawfile", imports: []string{"internal/stats", "internal/sim"}},
		{path: "internal/sim", imports: []string{"internal/rawfile"}},
		{path: "internal/watch", imports: []string{"internal/hold", "internal/sim"}},
		{path: "internal/hold", deps: []string{"github.com/spf13/pflag"}},
		{path: "cmd/tickscope", imports: []string{"internal/ui"}, deps: []string{"github.com/spf13/cobra"}},
		{path: "tools/x", imports: []string{"internal/ui"}, deps: []string{"github.com/spf13/cobra"}},
		{path: "internal/new"},
	}
	broken, unnamed := arrows(pkgs)
	want := []string{
		"internal/rawfile -> internal/sim (codec imports engine)",
		"internal/watch -> internal/hold (a use case imports another)",
		"internal/hold -> github.com/spf13/pflag (only cmd/tickscope links the command-line parser)",
	}
	if !slices.Equal(broken, want) {
		t.Errorf("broken arrows:\n got %q\nwant %q", broken, want)
	}
	if !slices.Equal(unnamed, []string{"internal/new"}) {
		t.Errorf("unnamed = %q, want internal/new", unnamed)
	}
}

// TestContributingNamesEveryPackage holds CONTRIBUTING.md's layout table
// to the tiers: a row for every package, in the tier Of gives it.
func TestContributingNamesEveryPackage(t *testing.T) {
	data, err := os.ReadFile("../../CONTRIBUTING.md")
	if err != nil {
		t.Fatal(err)
	}
	_, layout, ok := strings.Cut(string(data), "\n## Layout\n")
	if !ok {
		t.Fatal("CONTRIBUTING.md has no Layout section")
	}
	layout, _, _ = strings.Cut(layout, "\n## ")
	rows := map[string]string{}
	for line := range strings.Lines(layout) {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[2]), "`") {
			continue
		}
		place := strings.TrimRight(strings.Trim(strings.TrimSpace(cells[2]), "`"), "/")
		rows[place] = strings.TrimSpace(cells[1])
	}
	for place, tier := range Of {
		place = strings.TrimRight(place, "/")
		switch got, ok := rows[place]; {
		case !ok:
			t.Errorf("CONTRIBUTING.md's layout has no row for %s", place)
		case got != tier.String():
			t.Errorf("CONTRIBUTING.md puts %s in tier %q, tiers.Of in %q", place, got, tier)
		}
		delete(rows, place)
	}
	for place := range rows {
		t.Errorf("CONTRIBUTING.md's layout names %s, which tiers.Of does not", place)
	}
}
