package platform

import "slices"

// fileKey is a file as its file system tells it from every other, whatever
// path names it: on Windows the volume's serial number and the file's id
// (FILE_ID_INFO's 64-bit serial and 128-bit id where
// GetFileInformationByHandleEx serves FileIdInfo, Windows 8 and later;
// otherwise BY_HANDLE_FILE_INFORMATION's 32-bit serial and 64-bit index).
type fileKey struct {
	// wide is set for a FILE_ID_INFO key: keys of the two kinds never
	// compare equal, and one machine reads all its files' keys the same
	// way.
	wide   bool
	volume uint64
	id     [16]byte
}

// programFiles are the files that the programs of a scanner named by their
// paths name. A process runs such a program when the file its executable's
// path names is one of those files (its key), not when the path's text
// reads the same: a different file at a path that compares equal (another
// case on a case-sensitive volume, a mount of another file over the path)
// is not the program, and a hard link to it, or another path to the same
// file (a share, a link), is.
type programFiles struct {
	// identify reads the key of the file at path. ok is false when
	// nothing is there; err is why what is there could not be read.
	identify func(path string) (key fileKey, ok bool, err error)
	// paths are each program's paths (options.Program.Paths: nil for a
	// bare name).
	paths [][]string
	// keys are the files each program's paths named when last read.
	keys [][]fileKey
	// generation counts the reads that found a program's paths naming
	// other files than before (an update moved a new file over the old):
	// a process told at an earlier generation not to run a program is
	// told again.
	generation uint64
}

// newProgramFiles reads the files the programs' paths name now, when the
// hold starts: a path with nothing at it yet is read again at the first
// process that may run it.
func newProgramFiles(paths [][]string, identify func(string) (fileKey, bool, error)) *programFiles {
	f := &programFiles{identify: identify, paths: paths, keys: make([][]fileKey, len(paths))}
	for i := range paths {
		f.keys[i] = f.read(i)
	}
	return f
}

// read reads the files program i's paths name; a path that cannot be
// read names none.
func (f *programFiles) read(i int) []fileKey {
	var keys []fileKey
	for _, path := range f.paths[i] {
		if key, ok, err := f.identify(path); ok && err == nil && !slices.Contains(keys, key) {
			keys = append(keys, key)
		}
	}
	return keys
}

// runs reports whether the executable at image, a process's, is the file
// program i's path names: image's key against the path's. When they
// differ the path is read again, so that a program updated while the hold
// runs (its file replaced) is followed: what counts is the file at the
// path now. A process found running the old file before the update keeps
// counting (the scanner does not ask again while it runs). key is image's
// file; err is why image could not be read (the process's executable
// cannot be told), nothing at image is no match.
func (f *programFiles) runs(i int, image string) (key fileKey, runs bool, err error) {
	key, ok, err := f.identify(image)
	if err != nil || !ok {
		return fileKey{}, false, err
	}
	if slices.Contains(f.keys[i], key) {
		return key, true, nil
	}
	if now := f.read(i); !slices.Equal(now, f.keys[i]) {
		f.keys[i] = now
		f.generation++
	}
	return key, slices.Contains(f.keys[i], key), nil
}
