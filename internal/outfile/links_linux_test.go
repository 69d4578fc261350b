package outfile_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/outfile"
)

// nobody is the second user of the tests: the uid and gid 65534 that
// Debian and most distributions call nobody and nogroup.
const nobody = 65534

// asNobody runs a command as the user nobody, as another local user would.
func asNobody(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("setpriv", append([]string{"--reuid=65534", "--regid=65534", "--clear-groups"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v: %v: %s", args, err, out)
	}
}

// sharedDirs makes, under the temporary directory, a directory every user
// can reach, with in it: root (root's, 0755) holding a precious file; tmp,
// sticky and world-writable as /tmp is; theirs, nobody's own sticky
// world-writable directory; and home, nobody's plain directory.
func sharedDirs(t *testing.T) (base, precious string) {
	t.Helper()
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
	t.Cleanup(func() { os.RemoveAll(base) })
	for _, step := range []error{
		os.Chmod(base, 0o755),
		os.Mkdir(filepath.Join(base, "root"), 0o755),
		os.Mkdir(filepath.Join(base, "tmp"), 0o755),
		os.Chmod(filepath.Join(base, "tmp"), 0o1777|os.ModeSticky),
		os.Mkdir(filepath.Join(base, "theirs"), 0o755),
		os.Chown(filepath.Join(base, "theirs"), nobody, nobody),
		os.Chmod(filepath.Join(base, "theirs"), 0o777|os.ModeSticky),
		os.Mkdir(filepath.Join(base, "home"), 0o755),
		os.Chown(filepath.Join(base, "home"), nobody, nobody),
	} {
		if step != nil {
			t.Fatal(step)
		}
	}
	if fi, err := os.Stat(filepath.Join(base, "tmp")); err != nil || fi.Mode()&os.ModeSticky == 0 || fi.Mode().Perm() != 0o777 {
		t.Fatalf("the shared directory is not sticky and world-writable: %v %v", fi.Mode(), err)
	}
	precious = filepath.Join(base, "root", "precious")
	if err := os.WriteFile(precious, []byte("root's own data\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return base, precious
}

// TestRefusesLinksAnotherUserPlanted: root writing to a path in a sticky
// world-writable directory through a symlink that another user planted
// would replace whatever file of root's that user chose. Each such link,
// as the file's name or as a directory on the way, directly or through a
// chain, is refused (exit 2, naming the link and why) and the file it
// points at is left as it was. A link the caller or the directory's owner
// made is followed, as the kernel's fs.protected_symlinks follows it.
func TestRefusesLinksAnotherUserPlanted(t *testing.T) {
	base, precious := sharedDirs(t)
	tmp := filepath.Join(base, "tmp")
	asNobody(t, "ln", "-s", precious, filepath.Join(tmp, "result.json"))
	asNobody(t, "ln", "-s", "../root/precious", filepath.Join(tmp, "relative.json"))
	asNobody(t, "ln", "-s", filepath.Join(base, "root"), filepath.Join(tmp, "dir"))
	asNobody(t, "ln", "-s", precious, filepath.Join(tmp, "hop2"))
	if err := os.Symlink(filepath.Join(tmp, "hop2"), filepath.Join(tmp, "hop1")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ name, path, link string }{
		{"the file's name", filepath.Join(tmp, "result.json"), "result.json"},
		{"a relative link", filepath.Join(tmp, "relative.json"), "relative.json"},
		{"a directory on the way", filepath.Join(tmp, "dir", "precious"), "dir"},
		{"a directory on the way to a new file", filepath.Join(tmp, "dir", "new.json"), "dir"},
		{"the second link of a chain", filepath.Join(tmp, "hop1"), "hop2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			refused(t, tmp, tt.path, filepath.Join(tmp, tt.link)+" is a symlink owned by nobody (uid 65534) in "+tmp+", a sticky directory every user can write")
			if _, err := outfile.Target(tt.path); err == nil {
				t.Errorf("Target(%s) followed the link", tt.path)
			}
			got, err := os.ReadFile(precious)
			fi, _ := os.Stat(precious)
			if err != nil || string(got) != "root's own data\n" || fi.Mode().Perm() != 0o600 {
				t.Errorf("the file the link points at changed: %q %v %v", got, fi.Mode(), err)
			}
			if entries, _ := os.ReadDir(filepath.Dir(precious)); len(entries) != 1 {
				t.Errorf("root's directory holds %d entries, want its one file", len(entries))
			}
		})
	}
}

// TestFollowsLinksTheKernelFollows: a link root made in the shared
// directory, a link in a sticky directory its owner made, and a link in a
// directory that is not sticky are followed, and their target replaced.
func TestFollowsLinksTheKernelFollows(t *testing.T) {
	base, _ := sharedDirs(t)
	target := func(name string) string { return filepath.Join(base, "root", name) }
	for _, name := range []string{"mine.json", "theirs.json", "home.json"} {
		if err := os.WriteFile(target(name), []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(target("mine.json"), filepath.Join(base, "tmp", "mine.json")); err != nil {
		t.Fatal(err)
	}
	asNobody(t, "ln", "-s", target("theirs.json"), filepath.Join(base, "theirs", "link.json"))
	asNobody(t, "ln", "-s", target("home.json"), filepath.Join(base, "home", "link.json"))
	for path, want := range map[string]string{
		filepath.Join(base, "tmp", "mine.json"):    target("mine.json"),
		filepath.Join(base, "theirs", "link.json"): target("theirs.json"),
		filepath.Join(base, "home", "link.json"):   target("home.json"),
	} {
		o, err := outfile.Open("raw", path)
		if err != nil {
			t.Errorf("Open(%s): %v", path, err)
			continue
		}
		if err := o.Commit(func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
			t.Errorf("Commit(%s): %v", path, err)
		}
		if got, err := os.ReadFile(want); err != nil || string(got) != "new" {
			t.Errorf("writing %s: its target %s holds %q (%v)", path, want, got, err)
		}
	}
}

// TestAppendRefusesAnotherUsersFiles: OpenAppend (watch --log) holds to
// the same rule, and in a sticky world-writable directory appends only to
// a file of the caller's or the directory owner's: another user's file
// there may be a hard link to one of root's (the kernel's
// fs.protected_regular rule). Its own file and a new one are opened.
func TestAppendRefusesAnotherUsersFiles(t *testing.T) {
	base, precious := sharedDirs(t)
	tmp := filepath.Join(base, "tmp")
	asNobody(t, "ln", "-s", precious, filepath.Join(tmp, "link.log"))
	asNobody(t, "touch", filepath.Join(tmp, "theirs.log"))
	if err := os.WriteFile(filepath.Join(tmp, "mine.log"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		filepath.Join(tmp, "link.log"):   "link.log is a symlink owned by nobody (uid 65534)",
		filepath.Join(tmp, "theirs.log"): "theirs.log is owned by nobody (uid 65534) in " + tmp + ", a sticky directory every user can write",
	} {
		f, err := outfile.OpenAppend("log", path)
		if err == nil {
			f.Close()
			t.Errorf("OpenAppend(%s) was accepted", path)
			continue
		}
		if !strings.HasPrefix(err.Error(), "--log "+path+": ") || !strings.Contains(err.Error(), want) {
			t.Errorf("OpenAppend(%s): %q does not say %q", path, err, want)
		}
	}
	for _, name := range []string{"mine.log", "new.log"} {
		f, err := outfile.OpenAppend("log", filepath.Join(tmp, name))
		if err != nil {
			t.Errorf("OpenAppend(%s): %v", name, err)
			continue
		}
		f.Close()
	}
	if got, _ := os.ReadFile(precious); string(got) != "root's own data\n" {
		t.Errorf("root's file changed: %q", got)
	}
}

// TestCommitRefusesSwappedDirectory: root writes into a directory another
// user owns under a sticky world-writable one (/tmp/theirs/out.json).
// During the run that user renames the directory away and puts in its
// place a symlink to a directory of root's; Commit refuses, naming the
// directory, and writes nothing: not into root's directory through the
// link, nor into the directory moved away.
func TestCommitRefusesSwappedDirectory(t *testing.T) {
	for _, named := range []bool{false, true} {
		t.Run(map[bool]string{false: "unnamed", true: "named"}[named], func(t *testing.T) {
			if named {
				outfile.NamedTemporaries(t)
			}
			base, precious := sharedDirs(t)
			tmp := filepath.Join(base, "tmp")
			theirs := filepath.Join(tmp, "theirs")
			asNobody(t, "mkdir", theirs)
			o, err := outfile.Open("raw", filepath.Join(theirs, "out.json"))
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			asNobody(t, "mv", theirs, filepath.Join(tmp, "moved"))
			asNobody(t, "ln", "-s", filepath.Join(base, "root"), theirs)
			err = o.Commit(func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
			if err == nil || !strings.Contains(err.Error(), "the directory "+theirs+" was replaced during the run (it is now a symlink)") {
				t.Errorf("Commit: %v, want a refusal naming %s", err, theirs)
			}
			if entries, _ := os.ReadDir(filepath.Dir(precious)); len(entries) != 1 {
				t.Errorf("root's directory holds %d entries, want its one file", len(entries))
			}
			if got, _ := os.ReadFile(precious); string(got) != "root's own data\n" {
				t.Errorf("root's file changed: %q", got)
			}
			if entries, _ := os.ReadDir(filepath.Join(tmp, "moved")); len(entries) != 0 {
				t.Errorf("the directory moved away holds %v, want nothing", entries)
			}
		})
	}
}
