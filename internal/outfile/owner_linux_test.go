package outfile_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/tickscope/tickscope/internal/outfile"
)

// ways are the temporaries a file is written through: unnamed where the
// OS and the file system can (O_TMPFILE), named otherwise.
var ways = []struct {
	name  string
	setup func(*testing.T)
}{
	{"unnamed where it can", func(*testing.T) {}},
	{"named", outfile.NamedTemporaries},
}

// ownerAndMode is the owner, group and permission bits of path.
func ownerAndMode(t *testing.T, path string) (uid, gid uint32, perm os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return st.Uid, st.Gid, fi.Mode().Perm()
}

// TestReplacingKeepsOwnerAndMode: an existing file replaced keeps its
// owner, group and permission bits, another user's too (root replacing
// nobody's 0664 report leaves nobody's 0664 report, which nobody can
// still read), and a private one stays private whatever the umask; the
// set-id bits are not carried over.
func TestReplacingKeepsOwnerAndMode(t *testing.T) {
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			way.setup(t)
			dir := t.TempDir()
			for _, tt := range []struct {
				name     string
				mode     os.FileMode
				uid, gid int
				want     os.FileMode
			}{
				{"a 0644 file of the caller's", 0o644, -1, -1, 0o644},
				{"a 0600 file of the caller's", 0o600, -1, -1, 0o600},
				{"a 0664 file of nobody's", 0o664, nobody, nobody, 0o664},
				{"a setuid file of nobody's", 0o4755, nobody, nobody, 0o755},
			} {
				t.Run(tt.name, func(t *testing.T) {
					if tt.uid != -1 && os.Geteuid() != 0 {
						t.Skip("needs root, to give the file to another user")
					}
					path := filepath.Join(dir, "out.json")
					if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
						t.Fatal(err)
					}
					if err := os.Chown(path, tt.uid, tt.gid); err != nil {
						t.Fatal(err)
					}
					if err := os.Chmod(path, tt.mode|modeBits(tt.mode)); err != nil {
						t.Fatal(err)
					}
					wantUID, wantGID, _ := ownerAndMode(t, path)
					o, err := outfile.Open("raw", path)
					if err != nil {
						t.Fatal(err)
					}
					commit(t, o, "new")
					if data, _ := os.ReadFile(path); string(data) != "new" {
						t.Fatalf("the file holds %q, want the new text", data)
					}
					uid, gid, perm := ownerAndMode(t, path)
					fi, _ := os.Stat(path)
					if uid != wantUID || gid != wantGID || perm != tt.want || fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 {
						t.Errorf("replaced: %d:%d %v, want %d:%d %v", uid, gid, fi.Mode(), wantUID, wantGID, tt.want)
					}
				})
			}
		})
	}
}

// modeBits turns the set-id bits of a Unix mode into os.FileMode's.
func modeBits(m os.FileMode) os.FileMode {
	if m&0o4000 != 0 {
		return os.ModeSetuid
	}
	return 0
}

// TestNewFilesHonourTheUmask: a new file gets what any file the caller
// creates gets, 0666 less the umask, not the temporary's 0600.
func TestNewFilesHonourTheUmask(t *testing.T) {
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			way.setup(t)
			dir := t.TempDir()
			for _, tt := range []struct {
				umask int
				want  os.FileMode
			}{{0o022, 0o644}, {0o002, 0o664}, {0o077, 0o600}, {0o027, 0o640}} {
				old := syscall.Umask(tt.umask)
				path := filepath.Join(dir, "new.json")
				os.Remove(path)
				o, err := outfile.Open("raw", path)
				if err == nil {
					commit(t, o, "new")
				}
				syscall.Umask(old)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, perm := ownerAndMode(t, path); perm != tt.want {
					t.Errorf("umask %03o: a new file is %v, want %v", tt.umask, perm, tt.want)
				}
			}
		})
	}
}

// TestNobodyReadsTheFileReplaced: as the user it belongs to, nobody reads
// its report after root replaced it.
func TestNobodyReadsTheFileReplaced(t *testing.T) {
	base, _ := sharedDirs(t)
	path := filepath.Join(base, "home", "report.json")
	asNobody(t, "sh", "-c", "umask 002; echo old > "+path)
	o, err := outfile.Open("raw", path)
	if err != nil {
		t.Fatal(err)
	}
	commit(t, o, "root's measurement\n")
	out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", path).CombinedOutput()
	if err != nil || string(out) != "root's measurement\n" {
		t.Errorf("nobody reading its own report: %q, %v", out, err)
	}
}

// TestPlantedFilesAreNotKept: in a sticky directory every user can write
// (/tmp), a file owned by neither the caller nor the directory's owner may
// have been planted there for root's run to take over: nobody's 0666
// report.html, kept as nobody's and 0666, would be a page nobody can edit
// before root opens it. Such a file is replaced as the caller's own, with
// a new file's mode (0666 less the umask), the rule the kernel's
// fs.protected_regular applies and OpenAppend follows; a file the caller
// or the directory's owner made there keeps its owner and mode.
func TestPlantedFilesAreNotKept(t *testing.T) {
	for _, way := range ways {
		t.Run(way.name, func(t *testing.T) {
			way.setup(t)
			base, _ := sharedDirs(t)
			defer syscall.Umask(syscall.Umask(0o022))
			tmp, theirs := filepath.Join(base, "tmp"), filepath.Join(base, "theirs")
			asNobody(t, "sh", "-c", "umask 0; echo planted > "+filepath.Join(tmp, "report.html"))
			asNobody(t, "sh", "-c", "umask 0; echo theirs > "+filepath.Join(theirs, "report.html"))
			if err := os.WriteFile(filepath.Join(tmp, "mine.html"), []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(tmp, "mine.html"), 0o664); err != nil {
				t.Fatal(err)
			}
			for _, tt := range []struct {
				name, path string
				uid, gid   uint32
				want       os.FileMode
			}{
				{"another user's file in the shared directory", filepath.Join(tmp, "report.html"), 0, 0, 0o644},
				{"the caller's file in the shared directory", filepath.Join(tmp, "mine.html"), 0, 0, 0o664},
				{"the directory owner's file", filepath.Join(theirs, "report.html"), nobody, nobody, 0o666},
			} {
				t.Run(tt.name, func(t *testing.T) {
					o, err := outfile.Open("html", tt.path)
					if err != nil {
						t.Fatal(err)
					}
					commit(t, o, "root's report\n")
					if uid, gid, perm := ownerAndMode(t, tt.path); uid != tt.uid || gid != tt.gid || perm != tt.want {
						t.Errorf("replaced: %d:%d %v, want %d:%d %v", uid, gid, perm, tt.uid, tt.gid, tt.want)
					}
				})
			}
			planted := filepath.Join(tmp, "report.html")
			if out, err := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sh", "-c", "echo edited >> "+planted).CombinedOutput(); err == nil {
				t.Errorf("nobody could still write root's report: %s", out)
			}
			if data, _ := os.ReadFile(planted); string(data) != "root's report\n" {
				t.Errorf("root's report holds %q", data)
			}
		})
	}
}
