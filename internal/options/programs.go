package options

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of a program list (apply --while).
const (
	// MaxPrograms is the most programs one list names: a holder watches
	// for a game or a few, not a catalogue.
	MaxPrograms = 64
	// maxNameBytes is the longest file name Linux (NAME_MAX) and NTFS
	// (255 UTF-16 units) keep.
	maxNameBytes = 255
	// maxPathBytes is the longest path Linux's readlink of /proc/PID/exe
	// gives (PATH_MAX less its terminating NUL); Windows' long paths stay
	// under it in practice, and a longer value is a mistake.
	maxPathBytes = 4095
)

// Programs checks a comma-separated list of programs, each a bare name
// ("game.exe", "game") or the absolute path of an executable
// ("C:\Games\game.exe", "/opt/game/bin/game"), as the OS the list is for
// names them (windows: case-insensitive names, either slash, a drive or
// UNC root; otherwise Linux's rules). It returns the programs in the order
// given. An empty list or name, a name given twice, more than MaxPrograms,
// and a value that cannot name an executable (a relative path, a
// directory, a control character, a character the OS does not allow in a
// file name, too long) are usage errors naming the flag and the value.
func Programs(flag, value string, windows bool) ([]string, error) {
	bad := func(allowed string, args ...any) ([]string, error) {
		return nil, BadFlag(flag, value, allowed, args...)
	}
	if strings.TrimSpace(value) == "" {
		return bad("an empty list; give PROGRAM[,PROGRAM...]: a program's name or the absolute path of its executable")
	}
	names := strings.Split(value, ",")
	if len(names) > MaxPrograms {
		return bad("%d programs; at most %d", len(names), MaxPrograms)
	}
	seen := make(map[string]string, len(names))
	for i, name := range names {
		if name == "" {
			return bad("program %d of %d is empty (a comma too many); give PROGRAM[,PROGRAM...]", i+1, len(names))
		}
		if why := programProblem(name, windows); why != "" {
			return bad("%s %s", Value(name), why)
		}
		key := name
		if windows {
			// Windows compares names without case, and matches a name
			// without .exe as with it (Program).
			key = strings.ToLower(strings.ReplaceAll(name, "/", `\`))
			key = strings.TrimSuffix(key, windowsExe)
		}
		if first, twice := seen[key]; twice {
			if first == name {
				return bad("%s is given twice; name each program once", Value(name))
			}
			return bad("%s and %s name the same program (Windows compares names without case, and a name without .exe as with it); name each program once", Value(first), Value(name))
		}
		seen[key] = name
	}
	return names, nil
}

// programProblem says why name cannot name an executable, or "".
func programProblem(name string, windows bool) string {
	if !utf8.ValidString(name) {
		return "is not valid UTF-8"
	}
	for _, r := range name {
		if unicode.IsControl(r) || !unicode.IsPrint(r) && r != ' ' {
			return "holds a control character or one that does not print; give the name as the OS shows it"
		}
	}
	if strings.TrimSpace(name) != name {
		return "starts or ends with a space; give the name without (a space after a comma?)"
	}
	separators := "/"
	if windows {
		separators = `\/`
	}
	if !strings.ContainsAny(name, separators) {
		return fileNameProblem(name, windows)
	}
	if len(name) > maxPathBytes {
		return "is longer than a path can be (4095 bytes)"
	}
	rest, root := name, "/"
	if windows {
		rest, root = windowsRoot(name)
		if root == "" {
			return `is a relative path: give a program's name, or the absolute path of its executable (C:\Games\game.exe)`
		}
	} else if !strings.HasPrefix(name, "/") {
		return "is a relative path: give a program's name, or the absolute path of its executable (/opt/game/bin/game)"
	}
	if strings.ContainsAny(name[len(name)-1:], separators) {
		return "ends with a separator: a directory, not a program"
	}
	for _, part := range strings.FieldsFunc(rest, func(r rune) bool { return strings.ContainsRune(separators, r) }) {
		if part == "." || part == ".." {
			return "holds . or ..: give the path as the OS shows the executable's, without them"
		}
		if why := fileNameProblem(part, windows); why != "" {
			return why
		}
	}
	if strings.Contains(rest, "//") || windows && (strings.Contains(rest, `\\`) || strings.Contains(rest, `\/`) || strings.Contains(rest, `/\`)) {
		return "has an empty path element (two separators in a row)"
	}
	return ""
}

// fileNameProblem says why part cannot be a file name on the OS, or "".
func fileNameProblem(part string, windows bool) string {
	switch {
	case part == "." || part == "..":
		return "is a directory, not a program"
	case len(part) > maxNameBytes:
		return "is longer than a file name can be (255 bytes)"
	case windows && strings.ContainsAny(part, `<>:"|?*`):
		return `holds a character Windows does not allow in a file name (< > : " | ? *)`
	case windows && strings.HasSuffix(part, "."):
		return "ends with a dot, which Windows drops from a file name"
	}
	return ""
}

// windowsRoot splits an absolute Windows path into what follows its root
// and the root itself (C:\ or \\server\share\), or returns root "" for a
// relative path (game\x.exe, C:game.exe, \game.exe: the last two are
// relative to a drive's current directory or to the current drive).
func windowsRoot(path string) (rest, root string) {
	isSep := func(c byte) bool { return c == '\\' || c == '/' }
	if len(path) >= 3 && path[1] == ':' && isSep(path[2]) && (path[0]|0x20 >= 'a' && path[0]|0x20 <= 'z') {
		return path[3:], path[:3]
	}
	if len(path) >= 2 && isSep(path[0]) && isSep(path[1]) {
		// \\server\share\rest
		parts := strings.FieldsFunc(path[2:], func(r rune) bool { return r == '\\' || r == '/' })
		if len(parts) < 3 || strings.ContainsAny(path[2:3], `\/`) {
			return "", ""
		}
		at := 2 + len(parts[0]) + 1 + len(parts[1]) + 1
		if at > len(path) {
			return "", ""
		}
		return path[at:], path[:at]
	}
	return "", ""
}

// ProgramBase is the file name a program's path ends with (the name
// itself when it is a bare name), split on either slash on Windows.
func ProgramBase(program string, windows bool) string {
	separators := "/"
	if windows {
		separators = `\/`
	}
	return program[strings.LastIndexAny(program, separators)+1:]
}

// CommLen is the most bytes of a name Linux's comm holds (TASK_COMM_LEN
// less its terminating NUL, include/linux/sched.h).
const CommLen = 15

// windowsExe is the extension a Windows program's image has, which a name
// or path given without it is matched with (Program).
const windowsExe = ".exe"

// A Program is one program of a checked list (Programs), as an OS's rules
// tell its processes: first by the short name the OS shows for every
// process (Windows' image name from a process snapshot; Linux's comm, the
// base name of the path executed, cut to CommLen bytes), then, where that
// cannot tell, by the executable's path (Windows' image path; Linux's
// /proc/PID/exe, links resolved). The scanners of each OS and the fake OS
// match with it, so that one set of rules is tested.
//
// On Windows names and paths compare without case, either slash, and a
// name or path without ".exe" also matches the program with ".exe" added,
// as the command prompt runs it (the image name always carries its
// extension). On Linux they compare exactly: a name longer than comm holds
// and a path are told by the executable, and a path that is a link also
// matches its target (a process started by the target has the target's
// comm and executable).
type Program struct {
	windows bool
	// name is the bare name as given, "" for a path.
	name string
	// paths are the path as given and, on Linux, where its links lead;
	// on Windows with backslashes, and with ".exe" added when it lacked
	// it.
	paths []string
	// shortNames are the short names a process of it shows.
	shortNames []string
}

// NewProgram reads a program Programs checked by the rules of the OS it
// was checked for. resolve, on Linux, gives where a path's links lead
// (filepath.EvalSymlinks; nil or an error: nowhere else).
func NewProgram(program string, windows bool, resolve func(string) (string, error)) Program {
	p := Program{windows: windows}
	base := ProgramBase(program, windows)
	if base == program {
		p.name = program
	}
	if windows {
		names := []string{base}
		if !hasExe(base) {
			names = append(names, base+windowsExe)
		}
		p.shortNames = names
		if p.name == "" {
			path := strings.ReplaceAll(program, "/", `\`)
			p.paths = []string{path}
			if !hasExe(path) {
				p.paths = append(p.paths, path+windowsExe)
			}
		}
		return p
	}
	if p.name == "" {
		p.paths = []string{program}
		if resolve != nil {
			if target, err := resolve(program); err == nil && target != program {
				p.paths = append(p.paths, target)
			}
		}
	}
	for _, path := range append([]string{program}, p.paths...) {
		comm := ProgramBase(path, false)
		comm = comm[:min(len(comm), CommLen)]
		if !slices.Contains(p.shortNames, comm) {
			p.shortNames = append(p.shortNames, comm)
		}
	}
	return p
}

func hasExe(name string) bool {
	return len(name) >= len(windowsExe) && strings.EqualFold(name[len(name)-len(windowsExe):], windowsExe)
}

// ShortNameMatches reports whether a process showing this short name
// (Windows' image name, Linux's comm) may run the program: for a process
// whose short name does not, nothing else need be read.
func (p Program) ShortNameMatches(short string) bool {
	for _, name := range p.shortNames {
		if short == name || p.windows && strings.EqualFold(short, name) {
			return true
		}
	}
	return false
}

// ShortNames are the short names a process of the program may show
// (ShortNameMatches' names).
func (p Program) ShortNames() []string {
	return slices.Clone(p.shortNames)
}

// NeedsPath reports whether a process whose short name matches must have
// its executable's path read as well: a program named by its path, and on
// Linux a name longer than comm holds.
func (p Program) NeedsPath() bool {
	return p.name == "" || !p.windows && len(p.name) > CommLen
}

// Paths are the paths that name a program given by its path (nil for a
// bare name): the path as given and, on Windows, with ".exe" added when it
// lacks it (with backslashes); on Linux, where its links lead. A scanner
// that tells a program by its file reads the files these name.
func (p Program) Paths() []string {
	return slices.Clone(p.paths)
}

// PathMatches reports whether a process whose short name matches, running
// the executable at path, runs the program (NeedsPath).
func (p Program) PathMatches(path string) bool {
	if p.name != "" {
		return ProgramBase(path, p.windows) == p.name || p.windows && p.ShortNameMatches(ProgramBase(path, true))
	}
	if p.windows {
		path = strings.ReplaceAll(path, "/", `\`)
	}
	for _, want := range p.paths {
		if path == want || p.windows && strings.EqualFold(path, want) {
			return true
		}
	}
	return false
}

// Matches reports whether a process showing short, running the executable
// at path ("" when it could not be read), runs the program.
func (p Program) Matches(short, path string) bool {
	if !p.ShortNameMatches(short) {
		return false
	}
	return !p.NeedsPath() || path != "" && p.PathMatches(path)
}
