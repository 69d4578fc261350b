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
