package options

import (
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
			key = strings.ToLower(strings.ReplaceAll(name, "/", `\`))
		}
		if first, twice := seen[key]; twice {
			if first == name {
				return bad("%s is given twice; name each program once", Value(name))
			}
			return bad("%s and %s name the same program (Windows compares names without case); name each program once", Value(first), Value(name))
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

// ProgramIsPath reports whether a checked program is a path (it holds a
// separator) rather than a bare name.
func ProgramIsPath(program string, windows bool) bool {
	return ProgramBase(program, windows) != program
}
