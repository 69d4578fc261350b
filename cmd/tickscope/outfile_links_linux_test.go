package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputLinksAnotherUserPlanted: in a sticky world-writable directory
// (as /tmp), the user nobody plants name -> a file of root's; root's
// tickscope asked to write name (--raw, --html, --cyclictest-json,
// --histfile, watch --log) exits 2 before measuring, naming the link and
// why, and root's file is as it was (content and mode). Before, it was
// replaced and its mode changed, even with fs.protected_symlinks=1,
// because tickscope resolved the link itself and renamed over its target.
func TestOutputLinksAnotherUserPlanted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to plant links as a second user (setpriv --reuid=65534)")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv (util-linux) to act as a second user")
	}
	base, err := os.MkdirTemp("", "tickscope-links-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(base)
	shared, rootDir := filepath.Join(base, "tmp"), filepath.Join(base, "root")
	for _, step := range []error{os.Chmod(base, 0o755), os.Mkdir(shared, 0o755), os.Chmod(shared, 0o777|os.ModeSticky), os.Mkdir(rootDir, 0o700)} {
		if step != nil {
			t.Fatal(step)
		}
	}
	precious := filepath.Join(rootDir, "precious")
	const content = "root's own data\n"
	if err := os.WriteFile(precious, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(shared, "result.json")
	plant := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "ln", "-s", precious, link)
	if out, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("planting the link as nobody: %v: %s", err, out)
	}
	measure := []string{"measure", "--simulate", "published-pairs", "--samples", "5"}
	for _, args := range [][]string{
		append(measure, "--raw", link),
		append(measure, "--html", link),
		append(measure, "--cyclictest-json", link),
		append(measure, "--histfile", link),
		{"watch", "--log", link},
	} {
		var stdout, stderr bytes.Buffer
		a := &app{stdout: &stdout, stderr: &stderr}
		code := a.execute(args)
		flag := args[len(args)-2]
		want := "tickscope: error: " + flag + " " + link + ": " + link + " is a symlink owned by nobody (uid 65534) in " + shared + ", a sticky directory every user can write"
		if code != 2 || !strings.HasPrefix(stderr.String(), want) || strings.Count(stderr.String(), "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, stdout %q; want exit 2 and one line starting %q", args, code, stderr.String(), stdout.String(), want)
		}
		got, err := os.ReadFile(precious)
		fi, _ := os.Stat(precious)
		if err != nil || string(got) != content || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%v replaced root's file: %q, mode %v (%v)", args, got, fi.Mode(), err)
		}
	}
	if entries, _ := os.ReadDir(shared); len(entries) != 1 {
		t.Errorf("the shared directory holds %d entries, want the link alone", len(entries))
	}
}
