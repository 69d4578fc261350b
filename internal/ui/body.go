package ui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/tickscope/tickscope/internal/options"
)

// maxActionBody bounds an action's JSON body: a few numbers.
const maxActionBody = 4096

// errBodyTooLarge is a body over maxActionBody.
var errBodyTooLarge = fmt.Errorf("the body is over %d bytes; an action takes a few fields", maxActionBody)

// readAction reads an action's body into v as strictly as the command
// line is read: exactly one JSON object and nothing after it (encoding/json
// stops after the first value, so {"ms":"1"}garbage was taken), each
// field once (json takes the last of two) and spelt exactly as one of
// fields (json matches names regardless of case), nil fields meaning v's
// own JSON names. The error is one line, for a 400.
func readAction(w http.ResponseWriter, r *http.Request, v any, fields []string) error {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxActionBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errBodyTooLarge
		}
		return fmt.Errorf("reading the body: %w", err)
	}
	if fields == nil {
		fields = jsonNames(v)
	}
	if err := checkObject(data, fields); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return options.Usagef("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// checkObject checks that data is one JSON object, nothing after it, whose
// fields are among fields, each once; the objects and arrays inside it
// name each of their fields once too.
func checkObject(data []byte, fields []string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	first, err := dec.Token()
	if err != nil || first != json.Delim('{') {
		return errors.New("the body is one JSON object, such as {}")
	}
	if fields == nil {
		fields = []string{} // no field at all, not any field
	}
	if err := objectFields(dec, fields); err != nil {
		return err
	}
	if _, err := dec.Token(); err != nil {
		return bodySyntax(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("the body is one JSON object; more follows it at byte %d", dec.InputOffset())
	}
	return nil
}

// objectKey reads an object's next key.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", bodySyntax(err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", errors.New("the body is not valid JSON: an object's key is a string")
	}
	return key, nil
}

// objectFields reads an object's fields after its '{', up to its '}'
// (left to the caller): each named once and, unless allowed is nil, among
// allowed; their values are read by skipValue.
func objectFields(dec *json.Decoder, allowed []string) error {
	seen := map[string]bool{}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return err
		}
		if seen[key] {
			return options.Usagef("field %s is given twice; give each field once", options.Value(key))
		}
		seen[key] = true
		if allowed != nil && !slices.Contains(allowed, key) {
			return options.Usagef("unknown field %s; this action's fields are: %s", options.Value(key), listOrNone(allowed))
		}
		if err := skipValue(dec); err != nil {
			return err
		}
	}
	return nil
}

// skipValue reads one value, checking the objects in it for a field given
// twice.
func skipValue(dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return bodySyntax(err)
	}
	switch tok {
	case json.Delim('{'):
		if err := objectFields(dec, nil); err != nil {
			return err
		}
	case json.Delim('['):
		for dec.More() {
			if err := skipValue(dec); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return bodySyntax(err)
	}
	return nil
}

// bodySyntax words a syntax error of the body in one line.
func bodySyntax(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the body is not valid JSON: it ends early")
	}
	return options.Usagef("the body is not valid JSON: %s", err.Error())
}

// jsonNames are the JSON names of the fields of the struct v points to.
func jsonNames(v any) []string {
	t := reflect.TypeOf(v)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil
	}
	t = t.Elem()
	names := []string{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		names = append(names, name)
	}
	return names
}

func listOrNone(fields []string) string {
	if len(fields) == 0 {
		return "none ({})"
	}
	return strings.Join(fields, ", ")
}
