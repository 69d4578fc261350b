package tracefs

import (
	"os"
	"path/filepath"
	"testing"
)

// seedFiles adds every fixture matching the patterns to f's corpus.
func seedFiles(f *testing.F, patterns ...string) [][]byte {
	var all [][]byte
	for _, p := range patterns {
		paths, _ := filepath.Glob(p)
		for _, path := range paths {
			b, err := os.ReadFile(path)
			if err != nil {
				f.Fatal(err)
			}
			all = append(all, b)
		}
	}
	if len(all) == 0 {
		f.Fatalf("no seeds for %v", patterns)
	}
	return all
}

// FuzzParseFormat: any input either fails or gives a format whose every
// field can be read from any record without a panic.
func FuzzParseFormat(f *testing.F) {
	for _, b := range seedFiles(f, "testdata/*/events/*/*/format", "testdata/*/events/header_*") {
		f.Add(b, []byte{})
	}
	f.Fuzz(func(t *testing.T, b, rec []byte) {
		ParseHeaderPage(b)
		ParseHeaderEvent(b)
		ParseStats(b)
		fm, err := ParseFormat(b)
		if err != nil {
			return
		}
		if len(fm.Common)+len(fm.Fields) > MaxFields {
			t.Fatalf("%d fields", len(fm.Common)+len(fm.Fields))
		}
		for _, fd := range append(append([]Field{}, fm.Common...), fm.Fields...) {
			if fd.Offset < 0 || fd.Size < 0 || fd.Offset+fd.Size > MaxRecordBytes {
				t.Fatalf("field %+v out of bounds", fd)
			}
			fm.Int(rec, fd.Name)
			fm.Uint(rec, fd.Name)
			fm.String(rec, fd.Name)
			fm.Raw(rec, fd.Name)
		}
	})
}

// FuzzReadPage: its seeds are whole 4 KiB pages, which the fuzzer's
// default minimisation (up to 60 s per new input) makes crawl: run it as
//
//	go test ./internal/tracefs -run XXX -fuzz FuzzReadPage -fuzzminimizetime 2s
//
// Any page either fails or walks to its end in at most one
// step per 4 bytes, every record within the page, every field of this
// kernel's formats readable from it without a panic.
func FuzzReadPage(f *testing.F) {
	for _, b := range seedFiles(f, "testdata/6.18/capture/*.raw") {
		for off := 0; off+4096 <= len(b); off += 4096 {
			f.Add(b[off : off+4096])
		}
	}
	formats := map[uint16]*Format{}
	for _, b := range seedFiles(f, "testdata/6.18/events/*/*/format") {
		fm, err := ParseFormat(b)
		if err != nil {
			f.Fatal(err)
		}
		formats[fm.ID] = fm
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		r, err := ReadPage(page, DefaultPageLayout)
		if err != nil {
			return
		}
		steps := 0
		for r.Next() {
			steps++
			if steps > len(page)/4 {
				t.Fatalf("%d events from %d bytes", steps, len(page))
			}
			e := r.Event()
			if len(e.Data) > len(page) {
				t.Fatalf("a record of %d bytes in a page of %d", len(e.Data), len(page))
			}
			if fm := formats[e.Type]; fm != nil {
				for _, fd := range fm.Fields {
					fm.Int(e.Data, fd.Name)
					fm.String(e.Data, fd.Name)
					fm.Raw(e.Data, fd.Name)
				}
			}
		}
		if r.Next() {
			t.Fatal("Next true after false")
		}
	})
}
