package tracefs

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Limits of what ParseFormat accepts. A format file of Linux 6.18 is at
// most a few KiB (sched_switch's, with its print fmt, is 2 KiB); these
// bounds keep a hostile file from costing more than a small, fixed amount.
const (
	MaxFormatBytes = 1 << 20 // the longest format file read
	MaxFields      = 1024    // the most fields in one event
	// MaxRecordBytes bounds every offset and size: an event record lives in
	// one ring-buffer page, and a __data_loc word has 16 bits for each.
	MaxRecordBytes = 1 << 16
)

// Field is one field of an event as its format file declares it.
type Field struct {
	// Type is the C type as the kernel wrote it, without the array
	// suffix of the name: "unsigned short", "void *", "char" for
	// "char comm[16]", "__data_loc char[]".
	Type string
	Name string
	// Offset and Size locate the field in the event's record (from its
	// common_type). For a __data_loc or __rel_loc field they locate the
	// 32-bit word that locates the data.
	Offset int
	Size   int
	Signed bool
	// Array is true for a fixed array ("char comm[16]"); ArrayLen is its
	// element count, 0 when the kernel wrote a length that is not a number.
	Array    bool
	ArrayLen int
	// DataLoc is true for a __data_loc field, RelLoc for a __rel_loc one:
	// dynamic data (a string or an array) whose place and length the word
	// at Offset gives. ElemType is the element type of dynamic data
	// ("char" for "__data_loc char[]").
	DataLoc  bool
	RelLoc   bool
	ElemType string
	// Common is true for the common_ fields every event starts with.
	Common bool
}

// Dynamic reports whether the field's data is found through a
// __data_loc or __rel_loc word.
func (f *Field) Dynamic() bool { return f.DataLoc || f.RelLoc }

// isChar reports whether the field holds characters: a char array or
// dynamic char data, the two ways the kernel stores a string.
func (f *Field) isChar() bool {
	t := f.Type
	if f.Dynamic() {
		t = f.ElemType
	} else if !f.Array {
		return false
	}
	switch strings.TrimPrefix(t, "const ") {
	case "char", "unsigned char", "signed char", "u8", "s8":
		return true
	}
	return false
}

// Format is one event's layout, from events/SYSTEM/EVENT/format.
type Format struct {
	Name string
	// ID is the event's type, the value of common_type in its records.
	ID     uint16
	Common []Field
	Fields []Field
	// PrintFmt is the "print fmt:" line's text, kept for a reader; this
	// package does not interpret it.
	PrintFmt string
}

// FormatError says what is wrong with a format file and on which line.
type FormatError struct {
	Line   int // 1-based; 0 when the whole file is at fault
	Reason string
}

func (e *FormatError) Error() string {
	if e.Line == 0 {
		return "tracefs: format: " + e.Reason
	}
	return fmt.Sprintf("tracefs: format: line %d: %s", e.Line, e.Reason)
}

// ParseFormat parses an events/SYSTEM/EVENT/format file. It needs a name,
// an ID that fits common_type (16 bits) and a common_type field of 2
// bytes at offset 0; every field's offset and size must lie within
// MaxRecordBytes.
func ParseFormat(b []byte) (*Format, error) {
	if len(b) > MaxFormatBytes {
		return nil, &FormatError{Reason: fmt.Sprintf("longer than %d bytes", MaxFormatBytes)}
	}
	f := &Format{}
	haveName, haveID, inFields, common := false, false, false, true
	seen := make(map[string]bool)
	for n, line := range bytes.Split(b, []byte("\n")) {
		lineNo := n + 1
		s := strings.TrimRight(string(line), "\r")
		t := strings.TrimSpace(s)
		switch {
		case strings.HasPrefix(t, "name:"):
			if haveName {
				return nil, &FormatError{lineNo, "a second name line"}
			}
			f.Name = strings.TrimSpace(strings.TrimPrefix(t, "name:"))
			if f.Name == "" {
				return nil, &FormatError{lineNo, "empty name"}
			}
			haveName = true
		case strings.HasPrefix(t, "ID:"):
			if haveID {
				return nil, &FormatError{lineNo, "a second ID line"}
			}
			id, err := strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(t, "ID:")), 10, 16)
			if err != nil {
				return nil, &FormatError{lineNo, "ID is not a 16-bit number"}
			}
			f.ID = uint16(id)
			haveID = true
		case t == "format:":
			inFields = true
		case strings.HasPrefix(t, "print fmt:"):
			f.PrintFmt = strings.TrimSpace(strings.TrimPrefix(t, "print fmt:"))
			inFields = false
		case t == "":
			// The blank line after the common fields ends them.
			if inFields && len(f.Common) > 0 {
				common = false
			}
		case strings.HasPrefix(t, "field:"):
			if !inFields {
				return nil, &FormatError{lineNo, "a field outside the format section"}
			}
			fd, err := parseFieldLine(t)
			if err != nil {
				return nil, &FormatError{lineNo, err.Error()}
			}
			if seen[fd.Name] {
				return nil, &FormatError{lineNo, fmt.Sprintf("field %q declared twice", fd.Name)}
			}
			seen[fd.Name] = true
			if len(f.Common)+len(f.Fields) >= MaxFields {
				return nil, &FormatError{lineNo, fmt.Sprintf("more than %d fields", MaxFields)}
			}
			fd.Common = common && strings.HasPrefix(fd.Name, "common_")
			if fd.Common {
				f.Common = append(f.Common, fd)
			} else {
				common = false
				f.Fields = append(f.Fields, fd)
			}
		default:
			// Unknown lines are left alone: a later kernel may add some.
		}
	}
	if !haveName {
		return nil, &FormatError{Reason: "no name line"}
	}
	if !haveID {
		return nil, &FormatError{Reason: "no ID line"}
	}
	ct, ok := f.Field("common_type")
	if !ok || ct.Offset != 0 || ct.Size != 2 {
		return nil, &FormatError{Reason: "no 2-byte common_type field at offset 0"}
	}
	return f, nil
}

// parseFieldLine parses one "field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;"
// line (signed: is absent on very old kernels). header_page writes a
// space after "field:".
func parseFieldLine(t string) (Field, error) {
	var fd Field
	parts := strings.Split(t, ";")
	decl := strings.TrimSpace(strings.TrimPrefix(parts[0], "field:"))
	haveOff, haveSize := false, false
	seen := map[string]bool{}
	for _, p := range parts[1:] {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, ":")
		if !ok {
			return fd, fmt.Errorf("%q is not key:value", p)
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > MaxRecordBytes {
			return fd, fmt.Errorf("%s %q is not a number from 0 to %d", k, v, MaxRecordBytes)
		}
		k = strings.TrimSpace(k)
		if seen[k] {
			return fd, fmt.Errorf("%s twice", k)
		}
		seen[k] = true
		switch k {
		case "offset":
			fd.Offset, haveOff = n, true
		case "size":
			fd.Size, haveSize = n, true
		case "signed":
			fd.Signed = n != 0
		}
	}
	if !haveOff || !haveSize {
		return fd, errors.New("a field without offset or size")
	}
	if fd.Offset+fd.Size > MaxRecordBytes {
		return fd, fmt.Errorf("offset %d + size %d past %d", fd.Offset, fd.Size, MaxRecordBytes)
	}
	i := strings.LastIndexAny(decl, " \t*")
	if i < 0 || i == len(decl)-1 {
		return fd, fmt.Errorf("declaration %q has no type and name", decl)
	}
	fd.Name = decl[i+1:]
	fd.Type = strings.TrimSpace(decl[:i+1])
	if fd.Type == "" {
		return fd, fmt.Errorf("declaration %q has no type", decl)
	}
	if j := strings.IndexByte(fd.Name, '['); j >= 0 {
		if !strings.HasSuffix(fd.Name, "]") || j == 0 {
			return fd, fmt.Errorf("array name %q is not name[N]", fd.Name)
		}
		fd.Array = true
		if n, err := strconv.Atoi(fd.Name[j+1 : len(fd.Name)-1]); err == nil && n > 0 && n <= MaxRecordBytes {
			fd.ArrayLen = n
		}
		fd.Name = fd.Name[:j]
	}
	for _, kw := range []struct {
		prefix string
		flag   *bool
	}{{"__data_loc", &fd.DataLoc}, {"__rel_loc", &fd.RelLoc}} {
		if rest, ok := strings.CutPrefix(fd.Type, kw.prefix); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			*kw.flag = true
			fd.ElemType = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "[]"))
			if fd.Size != 4 {
				return fd, fmt.Errorf("%s field %q has size %d, not 4", kw.prefix, fd.Name, fd.Size)
			}
		}
	}
	if fd.Name == "" {
		return fd, fmt.Errorf("declaration %q has no name", decl)
	}
	return fd, nil
}

// Field finds a field (common or the event's own) by name.
func (f *Format) Field(name string) (*Field, bool) {
	for i := range f.Common {
		if f.Common[i].Name == name {
			return &f.Common[i], true
		}
	}
	for i := range f.Fields {
		if f.Fields[i].Name == name {
			return &f.Fields[i], true
		}
	}
	return nil, false
}
