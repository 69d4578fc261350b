package tracefs

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// loadFormats parses every events/*/*/format under dir, keyed by ID.
func loadFormats(t testing.TB, dir string) map[uint16]*Format {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "events", "*", "*", "format"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no format files under %s: %v", dir, err)
	}
	m := map[uint16]*Format{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := ParseFormat(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if want := filepath.Base(filepath.Dir(p)); f.Name != want {
			t.Errorf("%s: name %q, want %q", p, f.Name, want)
		}
		if m[f.ID] != nil {
			t.Fatalf("%s: ID %d twice", p, f.ID)
		}
		m[f.ID] = f
	}
	return m
}

func byName(m map[uint16]*Format, name string) *Format {
	for _, f := range m {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func readFile(t testing.TB, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseFormat618(t *testing.T) {
	m := loadFormats(t, "testdata/6.18")
	if len(m) != 18 {
		t.Errorf("%d formats, want 18", len(m))
	}
	hs := byName(m, "hrtimer_start")
	if hs == nil || hs.ID != 460 {
		t.Fatalf("hrtimer_start: %+v", hs)
	}
	if len(hs.Common) != 4 || len(hs.Fields) != 6 {
		t.Errorf("hrtimer_start: %d common, %d fields", len(hs.Common), len(hs.Fields))
	}
	wa, ok := hs.Field("was_armed")
	if !ok || wa.Offset != 44 || wa.Size != 1 || wa.Type != "bool" || wa.Signed {
		t.Errorf("was_armed: %+v", wa)
	}
	ex, _ := hs.Field("expires")
	if ex.Type != "s64" || !ex.Signed || ex.Offset != 24 || ex.Size != 8 {
		t.Errorf("expires: %+v", ex)
	}
	fn, _ := hs.Field("function")
	if fn.Type != "void *" {
		t.Errorf("function's type %q", fn.Type)
	}
	mt := byName(m, "sched_migrate_task")
	comm, _ := mt.Field("comm")
	if !comm.DataLoc || comm.ElemType != "char" || comm.Offset != 8 || comm.Size != 4 || comm.Type != "__data_loc char[]" {
		t.Errorf("sched_migrate_task.comm: %+v", comm)
	}
	sw := byName(m, "sched_switch")
	pc, _ := sw.Field("prev_comm")
	if !pc.Array || pc.ArrayLen != 16 || pc.Size != 16 || pc.Type != "char" {
		t.Errorf("prev_comm: %+v", pc)
	}
	if !strings.HasPrefix(sw.PrintFmt, `"prev_comm=%s`) {
		t.Errorf("print fmt %q", sw.PrintFmt)
	}
	ct, _ := sw.Field("common_type")
	if !ct.Common {
		t.Error("common_type not common")
	}
}

// decodeText renders a field as the kernel's print fmt does for the ones
// TestCapture618 compares.
func decodeText(t *testing.T, f *Format, data []byte, name string) string {
	fd, ok := f.Field(name)
	if !ok {
		t.Fatalf("%s has no %s", f.Name, name)
	}
	if fd.isChar() {
		s, err := f.String(data, name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	v, err := f.Int(data, name)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(v, 10)
}

// record builds an event record of n bytes with common_type id, writing
// each value at a literal offset: the layout as the kernel's structure
// has it, not as the format under test says.
type record []byte

func newRecord(n int, id uint16, pid int32) record {
	r := make(record, n)
	binary.LittleEndian.PutUint16(r, id)
	binary.LittleEndian.PutUint32(r[4:], uint32(pid))
	return r
}
func (r record) u32(off int, v uint32) record { binary.LittleEndian.PutUint32(r[off:], v); return r }
func (r record) u64(off int, v uint64) record { binary.LittleEndian.PutUint64(r[off:], v); return r }
func (r record) str(off int, s string) record { copy(r[off:], s); return r }

// TestTwoKernels reads the same fields by name from records in 5.10's and
// 6.18's layouts.
func TestTwoKernels(t *testing.T) {
	old := loadFormats(t, "testdata/older")
	now := loadFormats(t, "testdata/6.18")
	const expires, soft = 10770324000000, 10770323950000
	cases := []struct {
		kernel string
		f      *Format
		rec    record
		want   map[string]string
	}{
		{"5.10", byName(old, "sched_migrate_task"),
			newRecord(40, 317, 7).str(8, "tickscope").u32(24, 4242).u32(28, 120).u32(32, 0).u32(36, 1),
			map[string]string{"comm": "tickscope", "pid": "4242", "orig_cpu": "0", "dest_cpu": "1"}},
		{"6.18", byName(now, "sched_migrate_task"),
			// comm is __data_loc: the word at 8 says 10 bytes at offset 28.
			newRecord(40, 371, 7).u32(8, 10<<16|28).u32(12, 4242).u32(16, 120).u32(20, 0).u32(24, 1).str(28, "tickscope\x00"),
			map[string]string{"comm": "tickscope", "pid": "4242", "orig_cpu": "0", "dest_cpu": "1"}},
		{"5.10", byName(old, "hrtimer_start"),
			newRecord(48, 406, 7).u64(24, expires).u64(32, soft).u32(40, 1),
			map[string]string{"expires": "10770324000000", "softexpires": "10770323950000", "mode": "1"}},
		{"6.18", byName(now, "hrtimer_start"),
			newRecord(48, 460, 7).u64(24, expires).u64(32, soft).u32(40, 1).u32(44, 1),
			map[string]string{"expires": "10770324000000", "softexpires": "10770323950000", "mode": "1", "was_armed": "1"}},
		{"5.10", byName(old, "sched_wakeup"),
			newRecord(40, 320, 7).str(8, "sh").u32(24, 5371).u32(28, 120).u32(32, 1).u32(36, 1),
			map[string]string{"comm": "sh", "pid": "5371", "target_cpu": "1"}},
		{"6.18", byName(now, "sched_wakeup"),
			newRecord(36, 374, 7).str(8, "sh").u32(24, 5371).u32(28, 120).u32(32, 1),
			map[string]string{"comm": "sh", "pid": "5371", "target_cpu": "1"}},
		{"5.10", byName(old, "irq_handler_entry"),
			newRecord(32, 130, 0).u32(8, 36).u32(12, 14<<16|16).str(16, "virtio1-req.0\x00"),
			map[string]string{"irq": "36", "name": "virtio1-req.0", "common_pid": "0"}},
		{"6.18", byName(now, "irq_handler_entry"),
			newRecord(32, 225, 0).u32(8, 36).u32(12, 14<<16|16).str(16, "virtio1-req.0\x00"),
			map[string]string{"irq": "36", "name": "virtio1-req.0", "common_pid": "0"}},
	}
	for _, c := range cases {
		for name, want := range c.want {
			got := decodeText(t, c.f, c.rec, name)
			if got != want {
				t.Errorf("%s %s.%s = %q, want %q", c.kernel, c.f.Name, name, got, want)
			}
		}
	}
	if _, err := byName(old, "hrtimer_start").Int(nil, "was_armed"); !isFieldErr(err) {
		t.Errorf("5.10's hrtimer_start gave was_armed: %v", err)
	}
}

func isFieldErr(err error) bool {
	var fe *FieldError
	return errors.As(err, &fe)
}

func TestFieldErrors(t *testing.T) {
	f := byName(loadFormats(t, "testdata/6.18"), "sched_migrate_task")
	rec := newRecord(40, 371, -1).u32(8, 30<<16|28)
	for _, c := range []struct {
		what string
		err  error
	}{
		{"__data_loc past the record", func() error { _, err := f.String(rec, "comm"); return err }()},
		{"short record", func() error { _, err := f.Int(rec[:10], "pid"); return err }()},
		{"string of an int", func() error { _, err := f.String(rec, "pid"); return err }()},
		{"int of a string", func() error { _, err := f.Int(rec, "comm"); return err }()},
		{"negative as Uint", func() error { _, err := f.Uint(rec, "common_pid"); return err }()},
		{"no such field", func() error { _, err := f.Int(rec, "success"); return err }()},
	} {
		if !isFieldErr(c.err) {
			t.Errorf("%s: %v", c.what, c.err)
		}
	}
	if v, err := f.Int(rec, "common_pid"); v != -1 || err != nil {
		t.Errorf("common_pid %d, %v", v, err)
	}
	if v, err := f.Uint(rec, "common_type"); v != 371 || err != nil {
		t.Errorf("common_type %d, %v", v, err)
	}
}

func TestParseFormatErrors(t *testing.T) {
	good := string(readFile(t, "testdata/6.18/events/irq/softirq_entry/format"))
	for _, bad := range []string{
		"",
		strings.Replace(good, "name: softirq_entry", "", 1),
		strings.Replace(good, "ID: 223", "ID: 70000", 1),
		strings.Replace(good, "ID: 223", "", 1),
		strings.Replace(good, "offset:8;", "offset:-8;", 1),
		strings.Replace(good, "offset:8;", "offset:65535;", 1),
		strings.Replace(good, "size:2;", "size:4;", 1),
		strings.Replace(good, "field:unsigned int vec;", "field:unsigned int common_pid;", 1),
		strings.Replace(good, "field:unsigned int vec;", "field:__data_loc char[] vec;\tsize:8;", 1),
		strings.Replace(good, "field:unsigned int vec;", "field:vec;", 1),
		strings.Replace(good, "field:unsigned int vec;", "field:int v[;", 1),
		good + good,
	} {
		if f, err := ParseFormat([]byte(bad)); err == nil {
			t.Errorf("parsed %+v from\n%s", f, bad)
		}
	}
	f, err := ParseFormat([]byte(strings.Replace(good, "field:unsigned int vec;", "field:__rel_loc char[] vec;", 1)))
	if err != nil {
		t.Fatal(err)
	}
	// __rel_loc: the offset counts from the end of the word (8+4).
	rec := newRecord(20, 223, 0).u32(8, 3<<16).str(12, "NET")
	if s, err := f.String(rec, "vec"); s != "NET" || err != nil {
		t.Errorf("__rel_loc: %q, %v", s, err)
	}
	arr, err := ParseFormat([]byte(strings.Replace(good, "field:unsigned int vec;", "field:unsigned long args[NR];", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if fd, _ := arr.Field("args"); !fd.Array || fd.ArrayLen != 0 {
		t.Errorf("args[NR]: %+v", fd)
	}
}
