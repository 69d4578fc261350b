package rawfile

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/tickscope/tickscope/internal/printable"
)

// walkStrings calls fn with every string in v (a field, an entry of a
// list, behind any pointer) and its JSON path, stopping at fn's first
// error.
func walkStrings(v reflect.Value, path string, fn func(path string, s reflect.Value) error) error {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			return walkStrings(v.Elem(), path, fn)
		}
	case reflect.String:
		return fn(path, v)
	case reflect.Slice:
		switch v.Type().Elem().Kind() {
		case reflect.String, reflect.Struct, reflect.Pointer:
			for i := range v.Len() {
				if err := walkStrings(v.Index(i), path+"["+strconv.Itoa(i)+"]", fn); err != nil {
					return err
				}
			}
		}
	case reflect.Struct:
		if v.Type() == timeType {
			return nil
		}
		for i := range v.NumField() {
			f := v.Type().Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if path != "" {
				name = path + "." + name
			}
			if err := walkStrings(v.Field(i), name, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkStrings holds every string of f to what the reader accepts:
// printable text (the decoder refuses the rest as it reads) of at most
// MaxStringBytes.
func (f *File) checkStrings() error {
	return walkStrings(reflect.ValueOf(f).Elem(), "", func(path string, s reflect.Value) error {
		switch str := s.String(); {
		case !printable.String(str):
			return fmt.Errorf("%s: %q holds a character that does not print; a raw file's strings hold only printable text", path, str)
		case len(str) > MaxStringBytes:
			return fmt.Errorf("%s: a string over %d bytes; no field tickscope writes is that long", path, MaxStringBytes)
		}
		return nil
	})
}

// printableStrings rewrites each string of f that holds a character that
// does not print as printable.Message writes it (ESC as \x1b), before it is
// written: the OS's strings in the query (a kernel release, a Windows
// product name) are copied into the file as they are, and a file holds
// only printable text.
func (f *File) printableStrings() {
	walkStrings(reflect.ValueOf(f).Elem(), "", func(_ string, s reflect.Value) error {
		if str := s.String(); !printable.String(str) {
			s.SetString(printable.Message(str))
		}
		return nil
	})
}
