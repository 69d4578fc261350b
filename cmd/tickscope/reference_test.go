package main

import (
	"bytes"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// The command reference, docs/commands/*.md and the man pages
// docs/man/*.1, is generated from the commands themselves by cobra's doc
// package, so that it says what --help says, and the shell completions in
// completions/ by cobra as `tickscope completion SHELL` prints them; the
// release archives and packages ship the man pages and completions.
// TestCommandReference fails when the committed files differ from what the
// commands generate now; regenerateReference is the command that rewrites
// them.
const regenerateReference = "go test ./cmd/tickscope -run '^TestCommandReference$' -update"

var updateReference = flag.Bool("update", false, "rewrite docs/commands, docs/man and completions from the commands (TestCommandReference)")

// referenceDirs are the generated directories, from the repository's root:
// every file in them is generated.
var referenceDirs = []string{"docs/commands", "docs/man", "completions"}

func TestCommandReference(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reference is generated on Linux, whose --help it shows (measure's methods are each OS's own)")
	}
	want := generateReference(t)
	if again := generateReference(t); !maps.EqualFunc(want, again, bytes.Equal) {
		t.Fatal("two generations of the command reference differ: something in it is not deterministic (a date, a map's order, this machine)")
	}
	repo := filepath.Join("..", "..")
	if *updateReference {
		writeReference(t, repo, want)
		return
	}
	have := readReference(t, repo)
	var stale []string
	for name, text := range want {
		if got, ok := have[name]; !ok {
			stale = append(stale, name+" (missing)")
		} else if !bytes.Equal(got, text) {
			stale = append(stale, name+" (differs)")
		}
	}
	for name := range have {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no such command now)")
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		t.Errorf("the command reference is stale: %s\nregenerate it with: %s", strings.Join(stale, ", "), regenerateReference)
	}
}

// generateReference returns every file of the reference by its path from
// the repository's root.
func generateReference(t *testing.T) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	md, man := filepath.Join(dir, "md"), filepath.Join(dir, "man")
	for _, d := range []string{md, man} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	root := referenceTree()
	if err := doc.GenMarkdownTree(root, md); err != nil {
		t.Fatal(err)
	}
	header := &doc.GenManHeader{
		Section: "1",
		// The date is blanked below: a fixed one would be wrong after the
		// first change, and the time of generation is not reproducible.
		Date:   &time.Time{},
		Source: "tickscope",
		Manual: "tickscope manual",
	}
	if err := doc.GenManTree(root, header, man); err != nil {
		t.Fatal(err)
	}
	files := completions(t)
	for from, to := range map[string]string{md: "docs/commands", man: "docs/man"} {
		entries, err := os.ReadDir(from)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(from, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if to == "docs/man" {
				data = blankManDate(t, e.Name(), data, header.Date.Format("Jan 2006"))
			}
			files[to+"/"+e.Name()] = data
		}
	}
	return files
}

// referenceTree is the command tree as the reference shows it: the
// commands' own text, with each Long description kept as --help lays it
// out (a preformatted block: its lists and columns are aligned by hand
// for a terminal, which Markdown and man would otherwise reflow), and no
// "auto generated" line with a date.
func referenceTree() *cobra.Command {
	root := (&app{stdout: io.Discard, stderr: io.Discard}).rootCommand()
	var visit func(*cobra.Command)
	visit = func(cmd *cobra.Command) {
		cmd.DisableAutoGenTag = true
		if cmd.Long != "" {
			long := "```\n" + strings.TrimRight(cmd.Long, "\n") + "\n```"
			if strings.Contains(cmd.Long, "this OS") {
				long = "Generated on Linux: where this page lists what this OS offers, `" + cmd.CommandPath() + " --help` on Windows or macOS lists what that OS offers.\n\n" + long
			}
			cmd.Long = long
		}
		for _, c := range cmd.Commands() {
			visit(c)
		}
	}
	visit(root)
	return root
}

// completions returns the completion scripts, each as `tickscope
// completion SHELL` prints it (with descriptions), by its path from the
// repository's root.
func completions(t *testing.T) map[string][]byte {
	t.Helper()
	root := (&app{stdout: io.Discard, stderr: io.Discard}).rootCommand()
	files := map[string][]byte{}
	for name, gen := range map[string]func(io.Writer) error{
		"tickscope.bash": func(w io.Writer) error { return root.GenBashCompletionV2(w, true) },
		"tickscope.zsh":  root.GenZshCompletion,
		"tickscope.fish": func(w io.Writer) error { return root.GenFishCompletion(w, true) },
		"tickscope.ps1":  root.GenPowerShellCompletionWithDesc,
	} {
		var b bytes.Buffer
		if err := gen(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files["completions/"+name] = b.Bytes()
	}
	return files
}

// blankManDate empties the date field of a man page's .TH line, which
// cobra fills with the header's date.
func blankManDate(t *testing.T, name string, page []byte, date string) []byte {
	t.Helper()
	start := bytes.Index(page, []byte(".TH "))
	end := start + bytes.IndexByte(page[max(start, 0):], '\n')
	quoted := []byte(strconv.Quote(date))
	if start < 0 || end < start || !bytes.Contains(page[start:end], quoted) {
		t.Fatalf("%s: no .TH line with the date %s", name, quoted)
	}
	th := bytes.Replace(page[start:end], quoted, []byte(`""`), 1)
	return slices.Concat(page[:start], th, page[end:])
}

func readReference(t *testing.T, repo string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	for _, dir := range referenceDirs {
		entries, err := os.ReadDir(filepath.Join(repo, dir))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(repo, dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[dir+"/"+e.Name()] = data
		}
	}
	return files
}

// writeReference replaces the generated files: those of a command that no
// longer exists are removed.
func writeReference(t *testing.T, repo string, files map[string][]byte) {
	t.Helper()
	for name := range readReference(t, repo) {
		if _, ok := files[name]; !ok {
			if err := os.Remove(filepath.Join(repo, name)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, dir := range referenceDirs {
		if err := os.MkdirAll(filepath.Join(repo, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(repo, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %d files into %v", len(files), referenceDirs)
}
