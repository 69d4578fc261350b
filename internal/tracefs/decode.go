package tracefs

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
)

// The byte order of the records: little-endian (doc.go says why).
var le = binary.LittleEndian

// FieldError says why a field could not be read from a record.
type FieldError struct {
	Event  string
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("tracefs: %s.%s: %s", e.Event, e.Field, e.Reason)
}

func (f *Format) fieldErr(name, reason string) error {
	return &FieldError{Event: f.Name, Field: name, Reason: reason}
}

func (f *Format) lookup(name string) (*Field, error) {
	fd, ok := f.Field(name)
	if !ok {
		return nil, f.fieldErr(name, "no such field in this kernel's format")
	}
	return fd, nil
}

// Raw gives the bytes of a field in a record: the field itself for a
// fixed one, the data its word points at for a __data_loc or __rel_loc one.
// The slice aliases data.
func (f *Format) Raw(data []byte, name string) ([]byte, error) {
	fd, err := f.lookup(name)
	if err != nil {
		return nil, err
	}
	return f.raw(fd, data)
}

func (f *Format) raw(fd *Field, data []byte) ([]byte, error) {
	if fd.Offset+fd.Size > len(data) {
		return nil, f.fieldErr(fd.Name, fmt.Sprintf("record of %d bytes ends before the field (offset %d, size %d)", len(data), fd.Offset, fd.Size))
	}
	b := data[fd.Offset : fd.Offset+fd.Size]
	if !fd.Dynamic() {
		return b, nil
	}
	word := le.Uint32(b)
	off, n := int(word&0xffff), int(word>>16)
	if fd.RelLoc {
		off += fd.Offset + fd.Size
	}
	if off+n > len(data) {
		return nil, f.fieldErr(fd.Name, fmt.Sprintf("dynamic data at %d, %d bytes, past the record's %d bytes", off, n, len(data)))
	}
	return data[off : off+n], nil
}

// Int reads an integer field of 1, 2, 4 or 8 bytes: sign-extended when the
// format says signed, zero-extended otherwise (an unsigned 8-byte value
// above MaxInt64 is an error: read it with Uint).
func (f *Format) Int(data []byte, name string) (int64, error) {
	fd, err := f.lookup(name)
	if err != nil {
		return 0, err
	}
	u, err := f.scalar(fd, data)
	if err != nil {
		return 0, err
	}
	if fd.Signed {
		switch fd.Size {
		case 1:
			return int64(int8(u)), nil
		case 2:
			return int64(int16(u)), nil
		case 4:
			return int64(int32(u)), nil
		}
		return int64(u), nil
	}
	if u > math.MaxInt64 {
		return 0, f.fieldErr(name, fmt.Sprintf("unsigned value %d does not fit int64", u))
	}
	return int64(u), nil
}

// Uint reads an integer field of 1, 2, 4 or 8 bytes as unsigned; a signed
// field's negative value is an error.
func (f *Format) Uint(data []byte, name string) (uint64, error) {
	fd, err := f.lookup(name)
	if err != nil {
		return 0, err
	}
	u, err := f.scalar(fd, data)
	if err != nil {
		return 0, err
	}
	if fd.Signed && u>>(8*fd.Size-1)&1 == 1 {
		return 0, f.fieldErr(name, "negative value of a signed field")
	}
	return u, nil
}

func (f *Format) scalar(fd *Field, data []byte) (uint64, error) {
	if fd.Array || fd.Dynamic() {
		return 0, f.fieldErr(fd.Name, "an array, not an integer")
	}
	b, err := f.raw(fd, data)
	if err != nil {
		return 0, err
	}
	switch fd.Size {
	case 1:
		return uint64(b[0]), nil
	case 2:
		return uint64(le.Uint16(b)), nil
	case 4:
		return uint64(le.Uint32(b)), nil
	case 8:
		return le.Uint64(b), nil
	}
	return 0, f.fieldErr(fd.Name, fmt.Sprintf("size %d is not an integer's 1, 2, 4 or 8", fd.Size))
}

// String reads a char array or dynamic char data (__data_loc char[]) as a C
// string: up to its first NUL, or all of it when it has none.
func (f *Format) String(data []byte, name string) (string, error) {
	fd, err := f.lookup(name)
	if err != nil {
		return "", err
	}
	if !fd.isChar() {
		return "", f.fieldErr(name, fmt.Sprintf("type %q is not a char array", fd.Type))
	}
	b, err := f.raw(fd, data)
	if err != nil {
		return "", err
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b), nil
}
