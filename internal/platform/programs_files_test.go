package platform

import (
	"errors"
	"testing"
)

// fakeFiles is a file system for programFiles: each path names the file
// of its key, and a path missing from it names nothing.
type fakeFiles struct {
	keys  map[string]fileKey
	fail  map[string]error
	reads int
}

func (f *fakeFiles) identify(path string) (fileKey, bool, error) {
	f.reads++
	if err := f.fail[path]; err != nil {
		return fileKey{}, false, err
	}
	key, ok := f.keys[path]
	return key, ok, nil
}

func file(n byte) fileKey { return fileKey{wide: true, volume: 7, id: [16]byte{n}} }

// A process runs a program named by its path when its image is the file
// the path names, whatever the image's path reads: a hard link or another
// path to the file is the program; another file at a path that reads the
// same (another case, on a volume that tells case apart) is not.
func TestProgramFilesTellAPathByItsFile(t *testing.T) {
	fs := &fakeFiles{keys: map[string]fileKey{
		`C:\Games\game.exe`:        file(1),
		`D:\Links\game.exe`:        file(1), // a hard link
		`\\host\games\game.exe`:    file(1), // the same file through a share
		`C:\Games\GAME.EXE`:        file(2), // another file, a look-alike path
		`C:\Users\eve\game.exe`:    file(3), // a copy
		`C:\Games\game.exe.backup`: file(1),
	}}
	f := newProgramFiles([][]string{{`C:\Games\game.exe`}, nil}, fs.identify)
	for image, want := range map[string]bool{
		`C:\Games\game.exe`:     true,
		`D:\Links\game.exe`:     true,
		`\\host\games\game.exe`: true,
		`C:\Games\GAME.EXE`:     false,
		`C:\Users\eve\game.exe`: false,
		`C:\Gone\game.exe`:      false,
	} {
		if _, runs, err := f.runs(0, image); err != nil || runs != want {
			t.Errorf("an image at %s: runs %v, %v; want %v", image, runs, err, want)
		}
	}
	if f.generation != 0 {
		t.Errorf("the path named the same file throughout, yet generation is %d", f.generation)
	}
}

// A path given without .exe names the file at either path.
func TestProgramFilesReadEachPath(t *testing.T) {
	fs := &fakeFiles{keys: map[string]fileKey{`C:\Games\game.exe`: file(1), `C:\Other\game.exe`: file(1)}}
	f := newProgramFiles([][]string{{`C:\Games\game`, `C:\Games\game.exe`}}, fs.identify)
	if _, runs, err := f.runs(0, `C:\Other\game.exe`); err != nil || !runs {
		t.Errorf("a link to the file C:\\Games\\game names: runs %v, %v", runs, err)
	}
}

// The file a path names is read again when a process's differs: a
// program updated while the hold runs (a new file moved over the old) is
// followed, and a path with nothing at it when the hold began is read
// once a process may run it; each change is a new generation, so that a
// scanner tells again the processes it had told run none.
func TestProgramFilesFollowAnUpdate(t *testing.T) {
	fs := &fakeFiles{keys: map[string]fileKey{`C:\Games\new.exe`: file(2)}}
	f := newProgramFiles([][]string{{`C:\Games\game.exe`}}, fs.identify)
	if _, runs, _ := f.runs(0, `C:\Games\new.exe`); runs {
		t.Fatal("a process runs a program whose path names nothing")
	}
	fs.keys[`C:\Games\game.exe`] = file(1)
	if _, runs, _ := f.runs(0, `C:\Games\game.exe`); !runs || f.generation != 1 {
		t.Fatalf("the file installed after the hold began: runs %v, generation %d; want true, 1", runs, f.generation)
	}
	fs.keys[`C:\Games\game.exe`] = file(2) // the update
	if _, runs, _ := f.runs(0, `C:\Games\new.exe`); !runs || f.generation != 2 {
		t.Fatalf("the updated file: runs %v, generation %d; want true, 2", runs, f.generation)
	}
	fs.keys[`C:\Games\old.exe`] = file(1)
	if _, runs, _ := f.runs(0, `C:\Games\old.exe`); runs {
		t.Error("a process of the replaced file, found after the update, runs the program")
	}
	reads := fs.reads
	if _, runs, _ := f.runs(0, `C:\Games\game.exe`); !runs || fs.reads != reads+1 {
		t.Errorf("a process of the file the path names: runs %v after %d reads; want true after 1 (the image's alone)", runs, fs.reads-reads)
	}
}

// An image that cannot be read is why the process cannot be told; a path
// that cannot be read names no file.
func TestProgramFilesSayWhatCannotBeRead(t *testing.T) {
	denied := errors.New("access denied")
	fs := &fakeFiles{keys: map[string]fileKey{`C:\Games\game.exe`: file(1), `C:\Locked\game.exe`: file(1)},
		fail: map[string]error{`C:\Locked\game.exe`: denied, `C:\Hidden\game.exe`: denied}}
	f := newProgramFiles([][]string{{`C:\Games\game.exe`}, {`C:\Hidden\game.exe`}}, fs.identify)
	if _, runs, err := f.runs(0, `C:\Locked\game.exe`); runs || !errors.Is(err, denied) {
		t.Errorf("an image that cannot be opened: runs %v, err %v; want false, %v", runs, err, denied)
	}
	if _, runs, err := f.runs(1, `C:\Games\game.exe`); runs || err != nil {
		t.Errorf("a path that cannot be opened: runs %v, err %v; want false, nil", runs, err)
	}
}
