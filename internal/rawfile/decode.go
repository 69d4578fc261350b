package rawfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/printable"
)

// The reader is a strict, streaming JSON decoder written for this one
// document, because encoding/json cannot be made as strict as the format
// promises: it lets a second "version" or "points" silently win, matches
// "DELAY_NS" to delay_ns, replaces invalid UTF-8, buffers the whole
// document before decoding it, and spends about 200 ns and an allocation
// per token in its token API (1 s for the largest real file). This one
// reads the file in 64 KiB pieces, decodes straight into the File by
// reflection on its json tags, and stops at the first value or count over
// a limit, so a hostile file costs no more memory and time than the
// largest real one. Every error names the JSON path and what is allowed.
// github.com/go-json-experiment/json, strict where encoding/json is not,
// was measured against it and lost: it holds each string whole before its
// length can be checked, and is slower (CONTRIBUTING.md, Dependencies).

// failure carries a decoding error up the recursive descent; decode
// recovers it. Only this file panics with it.
type failure struct{ err error }

type decoder struct {
	ctx  context.Context
	src  io.Reader
	buf  []byte
	pos  int
	end  int
	base int64 // file offset of buf[0]
	eof  bool
	// line and lineStart place errors: newlines only occur in whitespace in
	// JSON, which is the only place they are counted.
	line      int
	lineStart int64
	// samples counts the samples read so far, against MaxTotalSamples.
	samples int
	scratch []byte
	lat     []int64 // latencies' buffer, reused
}

const readSize = 64 << 10

// decode reads one raw-samples document from src.
func decode(ctx context.Context, src io.Reader) (f *File, err error) {
	d := &decoder{ctx: ctx, src: src, buf: make([]byte, readSize), line: 1}
	defer func() {
		if r := recover(); r != nil {
			fail, ok := r.(failure)
			if !ok {
				panic(r)
			}
			f, err = nil, fail.err
		}
	}()
	f = &File{}
	c := d.skipWS()
	if c != '{' {
		d.failf("the document", "want an object (a tickscope raw-samples file), found %s", d.describe(c))
	}
	var seenFormat, seenVersion bool
	d.object(reflect.ValueOf(f).Elem(), "", func(name string) {
		switch name {
		case "format":
			seenFormat = true
			if f.Format != FormatName {
				d.fail(fmt.Errorf("not a tickscope raw-samples file: format is %q, want %q", f.Format, FormatName))
			}
		case "version":
			seenVersion = true
			switch {
			case f.Version > Version:
				d.fail(fmt.Errorf("version %d was written by a newer tickscope; this one reads version %d", f.Version, Version))
			case f.Version != Version:
				d.fail(fmt.Errorf("unknown version %d; this tickscope reads version %d", f.Version, Version))
			}
		}
	})
	if c, ok := d.peekWS(); ok {
		d.failf("", "data after the end of the document (%s after top-level value)", d.describe(c))
	}
	switch {
	case !seenFormat:
		return nil, errors.New(`not a tickscope raw-samples file: no "format" field`)
	case !seenVersion:
		return nil, errors.New(`no "version" field`)
	}
	return f, nil
}

// fail stops decoding with err.
func (d *decoder) fail(err error) { panic(failure{err}) }

// failf stops decoding with an error at path ("" for none) and the
// current position.
func (d *decoder) failf(path, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	d.fail(fmt.Errorf("at %s: %s", d.position(), msg))
}

func (d *decoder) position() string {
	off := d.base + int64(d.pos)
	return fmt.Sprintf("line %d, column %d", d.line, off-d.lineStart+1)
}

// fill reads the next piece of the file. It reports false at the end.
func (d *decoder) fill() bool {
	if d.eof {
		return false
	}
	if err := d.ctx.Err(); err != nil {
		d.fail(fmt.Errorf("stopped while reading: %w", err))
	}
	d.base += int64(d.end)
	d.pos, d.end = 0, 0
	for d.end == 0 {
		n, err := d.src.Read(d.buf)
		d.end = n
		if d.base+int64(n) > MaxFileBytes {
			d.fail(fmt.Errorf("over the size limit of %d bytes: no tickscope run writes a raw file that large", MaxFileBytes))
		}
		if err == io.EOF {
			d.eof = true
			return n > 0
		}
		if err != nil {
			d.fail(fmt.Errorf("reading: %w", err))
		}
	}
	return true
}

func (d *decoder) truncated() {
	d.fail(fmt.Errorf("truncated: the document ends at byte %d before it is complete", d.base+int64(d.end)))
}

// next consumes and returns a byte; the end of the file is a truncation.
func (d *decoder) next() byte {
	if d.pos == d.end && !d.fill() {
		d.truncated()
	}
	c := d.buf[d.pos]
	d.pos++
	return c
}

// peekWS skips whitespace and returns the next byte without consuming it;
// ok is false at the end of the file.
func (d *decoder) peekWS() (c byte, ok bool) {
	for {
		if d.pos == d.end && !d.fill() {
			return 0, false
		}
		switch c = d.buf[d.pos]; c {
		case ' ', '\t', '\r':
			d.pos++
		case '\n':
			d.pos++
			d.line++
			d.lineStart = d.base + int64(d.pos)
		default:
			return c, true
		}
	}
}

// skipWS is peekWS where the document must go on.
func (d *decoder) skipWS() byte {
	c, ok := d.peekWS()
	if !ok {
		d.truncated()
	}
	return c
}

// describe names what starts with c, for "found ..." in messages.
func (d *decoder) describe(c byte) string {
	switch {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("the character %q", c)
	}
	return fmt.Sprintf("the byte 0x%02x", c)
}

// literal consumes the literal word (true, false, null).
func (d *decoder) literal(path, word string) {
	for i := 0; i < len(word); i++ {
		if d.next() != word[i] {
			d.pos--
			d.failf(path, "invalid literal: want %s", word)
		}
	}
	d.endOfToken(path)
}

// endOfToken checks that a literal or number is not run into letters
// ("truex", "12a").
func (d *decoder) endOfToken(path string) {
	if d.pos == d.end && !d.fill() {
		return
	}
	switch c := d.buf[d.pos]; {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == '_':
		d.failf(path, "invalid character %q in a value", c)
	}
}

// str reads a string of at most MaxStringBytes bytes (decoded), rejecting
// invalid UTF-8, bad escapes, lone surrogates and every character that
// does not print (printable.Rune), written raw or as an escape: a control
// character decoded from "\u001b" reaches a terminal as surely as a raw
// one, and tickscope writes none (Write escapes them).
func (d *decoder) str(path string) string {
	if c := d.skipWS(); c != '"' {
		d.failf(path, "want a string, found %s", d.describe(c))
	}
	d.pos++
	out := d.scratch[:0]
	defer func() { d.scratch = out[:0] }()
	for {
		c := d.next()
		switch {
		case c == '"':
			return string(out)
		case c < 0x20 || c == 0x7f:
			d.pos--
			d.printable(path, rune(c))
		case c == '\\':
			out = d.escape(path, out)
		case c < utf8.RuneSelf:
			out = append(out, c)
		default:
			// A multi-byte UTF-8 sequence: gather it whole, then check it.
			var seqBuf [utf8.UTFMax]byte
			seq := append(seqBuf[:0], c)
			for range utf8SeqLen(c) - 1 {
				seq = append(seq, d.next())
			}
			r, size := utf8.DecodeRune(seq)
			if r == utf8.RuneError && size <= 1 || size != len(seq) {
				d.failf(path, "invalid UTF-8 in a string")
			}
			d.printable(path, r)
			out = append(out, seq...)
		}
		if len(out) > MaxStringBytes {
			d.failf(path, "a string over %d bytes; no field tickscope writes is that long", MaxStringBytes)
		}
	}
}

// utf8SeqLen is the length of the UTF-8 sequence that lead starts, or 0
// when lead cannot start one.
func utf8SeqLen(lead byte) int {
	switch {
	case lead&0xe0 == 0xc0:
		return 2
	case lead&0xf0 == 0xe0:
		return 3
	case lead&0xf8 == 0xf0:
		return 4
	}
	return 1 // a continuation or invalid byte: DecodeRune rejects it
}

// printable refuses a decoded character that does not print.
func (d *decoder) printable(path string, r rune) {
	if !printable.Rune(r) {
		d.failf(path, "%s in a string; a raw file's strings hold only printable text", unprintable(r))
	}
}

// unprintable names a character that does not print, for a message.
func unprintable(r rune) string {
	switch {
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("a control character (U+%04X)", r)
	case r >= 0x80 && r <= 0x9f:
		return fmt.Sprintf("a C1 control character (U+%04X)", r)
	}
	return fmt.Sprintf("a character that does not print (U+%04X)", r)
}

// escape decodes one escape after the backslash.
func (d *decoder) escape(path string, out []byte) []byte {
	switch c := d.next(); c {
	case '"', '\\', '/':
		return append(out, c)
	case 'b', 'f', 'n', 'r', 't':
		// Each stands for a control character.
		d.pos -= 2
		d.printable(path, map[byte]rune{'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[c])
	case 'u':
		r := d.hex4(path)
		if utf16.IsSurrogate(r) {
			if d.next() != '\\' || d.next() != 'u' {
				d.failf(path, "a lone UTF-16 surrogate escape in a string")
			}
			r = utf16.DecodeRune(r, d.hex4(path))
			if r == utf8.RuneError {
				d.failf(path, "an invalid UTF-16 surrogate pair in a string")
			}
		}
		d.printable(path, r)
		return utf8.AppendRune(out, r)
	default:
		d.pos--
		d.failf(path, "invalid escape \\%c in a string", c)
	}
	return out
}

func (d *decoder) hex4(path string) rune {
	var r rune
	for range 4 {
		c := d.next()
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			d.pos--
			d.failf(path, "invalid \\u escape in a string")
		}
	}
	return r
}

// number reads a JSON number's text, checking its grammar.
func (d *decoder) number(path string) (text string, integer bool) {
	out := d.scratch[:0]
	defer func() { d.scratch = out[:0] }()
	peek := func() byte {
		if d.pos == d.end && !d.fill() {
			return 0
		}
		return d.buf[d.pos]
	}
	digits := func() int {
		n := 0
		for c := peek(); c >= '0' && c <= '9'; c = peek() {
			out = append(out, c)
			d.pos++
			n++
			if len(out) > 32 {
				d.failf(path, "a number over 32 characters")
			}
		}
		return n
	}
	integer = true
	if peek() == '-' {
		out = append(out, '-')
		d.pos++
	}
	if peek() == '0' {
		out = append(out, '0')
		d.pos++
	} else if digits() == 0 {
		d.failf(path, "invalid number")
	}
	if peek() == '.' {
		integer = false
		out = append(out, '.')
		d.pos++
		if digits() == 0 {
			d.failf(path, "invalid number: no digits after the decimal point")
		}
	}
	if c := peek(); c == 'e' || c == 'E' {
		integer = false
		out = append(out, c)
		d.pos++
		if c := peek(); c == '+' || c == '-' {
			out = append(out, c)
			d.pos++
		}
		if digits() == 0 {
			d.failf(path, "invalid number: no digits in the exponent")
		}
	}
	d.endOfToken(path)
	return string(out), integer
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	pointType       = reflect.TypeFor[Point]()
	explainWaitType = reflect.TypeFor[ExplainWait]()
)

// want names what a Go type takes, for messages.
func want(t reflect.Type) string {
	if t == timeType {
		return "an RFC 3339 time in UTC as a string, e.g. \"2026-11-30T01:02:03Z\""
	}
	switch t.Kind() {
	case reflect.Pointer:
		return want(t.Elem()) + " or null"
	case reflect.Struct:
		return "an object"
	case reflect.Slice:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return t.String()
}

// value decodes the next value into v, whose type says what is allowed.
func (d *decoder) value(v reflect.Value, path string) {
	t := v.Type()
	c := d.skipWS()
	mismatch := func() { d.failf(path, "want %s, found %s", want(t), d.describe(c)) }
	if t == timeType {
		if c != '"' {
			mismatch()
		}
		s := d.str(path)
		var tm time.Time
		if err := tm.UnmarshalText([]byte(s)); err != nil || !strings.HasSuffix(s, "Z") {
			d.failf(path, "%q is not %s", s, want(t))
		}
		v.Set(reflect.ValueOf(tm))
		return
	}
	switch t.Kind() {
	case reflect.Pointer:
		if c == 'n' {
			d.literal(path, "null")
			v.SetZero()
			return
		}
		elem := reflect.New(t.Elem())
		d.value(elem.Elem(), path)
		v.Set(elem)
	case reflect.Struct:
		if c != '{' {
			mismatch()
		}
		d.object(v, path, nil)
	case reflect.Slice:
		if c == 'n' {
			d.literal(path, "null")
			v.SetZero()
			return
		}
		if c != '[' {
			mismatch()
		}
		d.array(v, path)
	case reflect.String:
		if c != '"' {
			mismatch()
		}
		v.SetString(d.str(path))
	case reflect.Bool:
		switch c {
		case 't':
			d.literal(path, "true")
			v.SetBool(true)
		case 'f':
			d.literal(path, "false")
			v.SetBool(false)
		default:
			mismatch()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		if c != '-' && (c < '0' || c > '9') {
			mismatch()
		}
		text, integer := d.number(path)
		d.setNumber(v, path, text, integer)
	default:
		d.failf(path, "cannot decode into %s", t)
	}
}

func (d *decoder) setNumber(v reflect.Value, path, text string, integer bool) {
	t := v.Type()
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(text, t.Bits())
		if err != nil {
			d.failf(path, "%s is out of range", text)
		}
		v.SetFloat(f)
		return
	}
	if !integer {
		d.failf(path, "%s is not %s", text, want(t))
	}
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(text, 10, t.Bits())
		if err != nil {
			d.failf(path, "%s is not %s of at most %d bits", text, want(t), t.Bits())
		}
		v.SetUint(n)
	default:
		n, err := strconv.ParseInt(text, 10, t.Bits())
		if err != nil {
			d.failf(path, "%s is out of range for %s of %d bits", text, want(t), t.Bits())
		}
		v.SetInt(n)
	}
}

// array decodes an array into the slice v. The long arrays have their
// own limits: points (MaxPoints, and each point is decoded as it comes),
// latencies_ns (latencies) and explain.late (MaxExplainLate); every other
// list holds at most MaxListLength.
func (d *decoder) array(v reflect.Value, path string) {
	d.pos++ // '['
	elemType := v.Type().Elem()
	limit, what := MaxListLength, "entries"
	switch elemType {
	case pointType:
		limit, what = MaxPoints, "points"
	case explainWaitType:
		limit, what = MaxExplainLate, "late waits"
	}
	out := reflect.MakeSlice(v.Type(), 0, 0)
	if c := d.skipWS(); c == ']' {
		d.pos++
		v.Set(out)
		return
	}
	for i := 0; ; i++ {
		if i == limit {
			d.failf(path, "more than %d %s; no tickscope run writes more", limit, what)
		}
		elemPath := path + "[" + strconv.Itoa(i) + "]"
		out = reflect.Append(out, reflect.Zero(elemType))
		d.value(out.Index(i), elemPath)
		switch c := d.skipWS(); c {
		case ',':
			d.pos++
		case ']':
			d.pos++
			v.Set(out)
			return
		default:
			d.failf(path, "want ',' or ']' after an element, found %s", d.describe(c))
		}
	}
}

// latencies decodes a point's latencies_ns: the one long list, read
// without reflection or allocation per sample, and checked as it is read.
// The samples gather in a buffer reused from point to point and are then
// copied to a slice of their exact size, so that the memory held is the
// samples themselves, not the garbage of a growing slice per point.
func (d *decoder) latencies(dst *[]int64, path string) {
	c := d.skipWS()
	if c != '[' {
		d.failf(path, "want an array of integers (ns), found %s", d.describe(c))
	}
	d.pos++
	buf := d.lat[:0]
	defer func() { d.lat = buf[:0] }()
	if c := d.skipWS(); c != ']' {
		for {
			i := len(buf)
			if i == MaxSamplesPerPoint {
				d.failf(path, "more than %d samples in one point; no tickscope run takes more", MaxSamplesPerPoint)
			}
			if d.samples == MaxTotalSamples {
				d.failf(path, "the file holds more than %d samples in all; no tickscope run takes more", MaxTotalSamples)
			}
			d.samples++
			buf = append(buf, d.latency(path, i))
			c := d.skipWS()
			if c == ']' {
				break
			}
			if c != ',' {
				d.failf(path, "want ',' or ']' after a sample, found %s", d.describe(c))
			}
			d.pos++
		}
	}
	d.pos++ // ']'
	*dst = append(make([]int64, 0, len(buf)), buf...)
}

// latency reads one sample: a non-negative integer of at most
// MaxLatencyNs. Digits inside the buffer are read directly; a number that
// crosses a piece boundary or is not plain goes through number.
func (d *decoder) latency(path string, i int) int64 {
	c := d.skipWS()
	var v int64
	j := d.pos
	if c >= '1' && c <= '9' {
		for j < d.end && d.buf[j] >= '0' && d.buf[j] <= '9' && j-d.pos < 12 {
			v = v*10 + int64(d.buf[j]-'0')
			j++
		}
		if j < d.end && j-d.pos < 12 {
			if e := d.buf[j]; e == ',' || e == ']' || e == ' ' || e == '\n' || e == '\r' || e == '\t' {
				d.pos = j
				if v > MaxLatencyNs {
					d.failf(fmt.Sprintf("%s[%d]", path, i), "%d ns is absurd (over %v)", v, time.Duration(MaxLatencyNs))
				}
				return v
			}
		}
	}
	where := fmt.Sprintf("%s[%d]", path, i)
	if c != '-' && (c < '0' || c > '9') {
		d.failf(where, "want an integer (ns), found %s", d.describe(c))
	}
	text, integer := d.number(where)
	if !integer {
		d.failf(where, "%s is not an integer (ns)", text)
	}
	if strings.HasPrefix(text, "-") {
		d.failf(where, "%s is negative", text)
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil || n > MaxLatencyNs {
		d.failf(where, "%s ns is absurd (over %v)", text, time.Duration(MaxLatencyNs))
	}
	return n
}

// structInfo is a struct type's JSON fields, by their exact tag names.
type structInfo struct {
	names []string       // in declaration order, for messages
	index map[string]int // name -> field index
	lower map[string]string
	// omitted marks, by field index, the fields tagged omitempty: the
	// writer (encoding/json) leaves them out when empty, so a file that
	// holds one empty ("stopped": false) was not written by tickscope.
	omitted []bool
}

var structInfos sync.Map // reflect.Type -> *structInfo

func infoOf(t reflect.Type) *structInfo {
	if si, ok := structInfos.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{index: map[string]int{}, lower: map[string]string{}, omitted: make([]bool, t.NumField())}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		si.omitted[i] = slices.Contains(strings.Split(opts, ","), "omitempty")
		si.names = append(si.names, name)
		si.index[name] = i
		si.lower[strings.ToLower(name)] = name
	}
	structInfos.Store(t, si)
	return si
}

// object decodes an object into the struct v: each key must be one of the
// struct's json tags, spelt exactly, and appear once. done is told each
// field after its value is decoded (nil for none).
func (d *decoder) object(v reflect.Value, path string, done func(name string)) {
	d.pos++ // '{'
	si := infoOf(v.Type())
	seen := make([]bool, v.NumField())
	where := path
	if where == "" {
		where = "the document"
	}
	join := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	if c := d.skipWS(); c == '}' {
		d.pos++
		return
	}
	for {
		if c := d.skipWS(); c != '"' {
			d.failf(where, "want a field name in double quotes, found %s", d.describe(c))
		}
		key := d.str(where)
		i, ok := si.index[key]
		if !ok {
			if exact, ok := si.lower[strings.ToLower(key)]; ok {
				d.failf(where, "field %q is spelt %q: field names are case-sensitive", key, exact)
			}
			d.failf(where, "unknown field %q; allowed: %s", key, strings.Join(si.names, ", "))
		}
		if seen[i] {
			d.failf(join(key), "appears twice; each field may appear once")
		}
		seen[i] = true
		if c := d.skipWS(); c != ':' {
			d.failf(join(key), "want ':' after the field name, found %s", d.describe(c))
		}
		d.pos++
		field := v.Field(i)
		if v.Type() == pointType && key == "latencies_ns" {
			d.latencies(field.Addr().Interface().(*[]int64), join(key))
		} else {
			d.value(field, join(key))
		}
		if si.omitted[i] && emptyJSON(field) {
			d.failf(join(key), "%s is what tickscope leaves out (it writes the field only when it holds something): a file it wrote never holds it", emptyText(field))
		}
		if done != nil {
			done(key)
		}
		switch c := d.skipWS(); c {
		case ',':
			d.pos++
		case '}':
			d.pos++
			return
		default:
			d.failf(where, "want ',' or '}' after a field, found %s", d.describe(c))
		}
	}
}

// emptyJSON reports whether encoding/json's omitempty leaves v out: false,
// 0, "", null, an empty list.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Struct:
		return false // omitempty never leaves a struct out
	}
	return v.IsZero()
}

// emptyText is an empty value as the file spells it.
func emptyText(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return "false"
	case reflect.String:
		return `""`
	case reflect.Slice:
		if v.IsNil() {
			return "null"
		}
		return "[]"
	case reflect.Pointer:
		return "null"
	}
	return "0"
}
