package tracefs

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestHeaders(t *testing.T) {
	for _, dir := range []string{"testdata/6.18", "testdata/older"} {
		l, err := ParseHeaderPage(readFile(t, dir+"/events/header_page"))
		if err != nil {
			t.Fatal(err)
		}
		if l != DefaultPageLayout {
			t.Errorf("%s: layout %+v", dir, l)
		}
		h, err := ParseHeaderEvent(readFile(t, dir+"/events/header_event"))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Check(); err != nil {
			t.Error(err)
		}
	}
	if _, err := ParseHeaderEvent([]byte("type_len : 6 bits\n")); err == nil {
		t.Error("a partial header_event parsed")
	}
	h := SupportedEventHeader
	h.TypeLenBits = 6
	if h.Check() == nil {
		t.Error("a 6-bit type_len passed Check")
	}
	l, err := ParseHeaderPage([]byte("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n"))
	if err != nil || l.CommitSize != 4 || l.DataOffset != 12 {
		t.Errorf("32-bit header_page: %+v, %v", l, err)
	}
}

// textEvent is one line of the kernel's text output (per_cpu/cpuN/trace).
type textEvent struct {
	usec   uint64 // the time stamp in µs, as printed
	name   string
	fields map[string]string
}

var traceLine = regexp.MustCompile(`^\s*.+-\d+\s+\[\d+\]\s+\S+\s+(\d+)\.(\d{6}): (\w+): (.*)$`)

func readTrace(t *testing.T, p string) []textEvent {
	t.Helper()
	var evs []textEvent
	sc := bufio.NewScanner(bytes.NewReader(readFile(t, p)))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		m := traceLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unparsed trace line %q", line)
		}
		sec, _ := strconv.ParseUint(m[1], 10, 64)
		us, _ := strconv.ParseUint(m[2], 10, 64)
		e := textEvent{usec: sec*1e6 + us, name: m[3], fields: map[string]string{}}
		for _, kv := range strings.Fields(m[4]) {
			if k, v, ok := strings.Cut(strings.Trim(kv, "[]"), "="); ok {
				e.fields[k] = v
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// readPages decodes every page of a trace_pipe_raw capture.
func readPages(t *testing.T, raw []byte) ([]PageHeader, []Event) {
	t.Helper()
	var hs []PageHeader
	var evs []Event
	for off := 0; off < len(raw); off += 4096 {
		r, err := ReadPage(raw[off:off+4096], DefaultPageLayout)
		if err != nil {
			t.Fatalf("page %d: %v", off/4096, err)
		}
		hs = append(hs, r.Header)
		for r.Next() {
			evs = append(evs, r.Event())
		}
		if r.Err() != nil {
			t.Fatalf("page %d: %v", off/4096, r.Err())
		}
	}
	return hs, evs
}

// usec rounds ns to µs as the kernel's text does (ns2usecs).
func usec(ns uint64) uint64 { return (ns + 500) / 1000 }

// TestCapture618 reads real pages of this machine's 6.18 kernel and checks
// each event against the kernel's own text of the same buffer.
func TestCapture618(t *testing.T) {
	formats := loadFormats(t, "testdata/6.18")
	hs, evs := readPages(t, readFile(t, "testdata/6.18/capture/cpu1.raw"))
	text := readTrace(t, "testdata/6.18/capture/cpu1.trace")
	st, err := ParseStats(readFile(t, "testdata/6.18/capture/cpu1.stats"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(text) || uint64(len(evs)) != st.Entries {
		t.Fatalf("%d events decoded, %d in the text, %d entries in stats", len(evs), len(text), st.Entries)
	}
	for _, h := range hs {
		if h.Lost {
			t.Errorf("page at %d says events were lost", h.Timestamp)
		}
	}
	checked := map[string]int{}
	var prev uint64
	for i, e := range evs {
		want := text[i]
		f := formats[e.Type]
		if f == nil {
			t.Fatalf("event %d: type %d has no format", i, e.Type)
		}
		if f.Name != want.name || usec(e.Timestamp) != want.usec {
			t.Fatalf("event %d: %s at %d µs, the kernel says %s at %d µs", i, f.Name, usec(e.Timestamp), want.name, want.usec)
		}
		if e.Timestamp < prev {
			t.Fatalf("event %d: time went back from %d to %d", i, prev, e.Timestamp)
		}
		prev = e.Timestamp
		var names []string
		switch f.Name {
		case "sched_switch":
			names = []string{"prev_comm", "prev_pid", "prev_prio", "next_comm", "next_pid", "next_prio"}
		case "sched_waking":
			names = []string{"comm", "pid", "prio", "target_cpu"}
		case "sched_migrate_task":
			names = []string{"comm", "pid", "prio", "orig_cpu", "dest_cpu"}
		case "hrtimer_start":
			names = []string{"expires", "softexpires", "was_armed"}
		case "hrtimer_expire_entry":
			names = []string{"now"}
		case "irq_handler_entry":
			names = []string{"irq", "name"}
		case "softirq_entry":
			names = []string{"vec"}
		case "local_timer_entry":
			names = []string{"vector"}
		}
		for _, n := range names {
			got := decodeText(t, f, e.Data, n)
			w := want.fields[n]
			if n == "target_cpu" {
				w = strings.TrimLeft(w, "0")
				if w == "" {
					w = "0"
				}
			}
			if got != w {
				t.Errorf("event %d %s.%s = %q, the kernel says %q", i, f.Name, n, got, w)
			}
		}
		checked[f.Name]++
	}
	for _, n := range []string{"sched_switch", "sched_migrate_task", "hrtimer_start", "irq_handler_entry"} {
		if checked[n] == 0 {
			t.Errorf("no %s in the capture", n)
		}
	}
	t.Logf("%d events on %d pages checked against the kernel's text: %v", len(evs), len(hs), checked)
}

func TestOverrunPage(t *testing.T) {
	hs, evs := readPages(t, readFile(t, "testdata/6.18/capture/overrun-cpu0.raw"))
	if !hs[0].Lost || hs[0].LostCountKnown || hs[0].DataSize != 4076 {
		t.Errorf("first page: %+v", hs[0])
	}
	if hs[0].Commit != 0xffffffff80000fec {
		t.Errorf("commit %#x", hs[0].Commit)
	}
	if hs[1].Lost {
		t.Errorf("second page: %+v", hs[1])
	}
	text := readTrace(t, "testdata/6.18/capture/overrun-cpu0.trace")
	st, err := ParseStats(readFile(t, "testdata/6.18/capture/overrun-cpu0.stats"))
	if err != nil || st.Overrun != 2166 || st.Entries != 1595 || st.Lost() != 2166 {
		t.Errorf("stats %+v, %v", st, err)
	}
	formats := loadFormats(t, "testdata/6.18")
	for i, e := range evs {
		if f := formats[e.Type]; f == nil || f.Name != text[i].name || usec(e.Timestamp) != text[i].usec {
			t.Fatalf("event %d: %v at %d, the kernel says %s at %d", i, f, usec(e.Timestamp), text[i].name, text[i].usec)
		}
	}
	if len(evs) != 193 {
		t.Errorf("%d events, the kernel counted 193 read", len(evs))
	}
}

func TestMissedStoredPage(t *testing.T) {
	hs, evs := readPages(t, readFile(t, "testdata/6.18/capture/missed-stored-cpu0.raw"))
	if !hs[0].Lost || !hs[0].LostCountKnown || hs[0].LostCount != 187 || hs[0].DataSize != 4064 {
		t.Errorf("page: %+v", hs[0])
	}
	if len(evs) == 0 {
		t.Error("no events")
	}
}

// page builds a ring-buffer page from event words.
type page struct {
	ts    uint64
	data  []byte
	flags uint32
	tail  []byte
}

func (p *page) word(w ...uint32) *page {
	for _, x := range w {
		p.data = binary.LittleEndian.AppendUint32(p.data, x)
	}
	return p
}
func hdr(typeLen, delta uint32) uint32 { return delta<<5 | typeLen }

func (p *page) bytes() []byte {
	b := make([]byte, 4096)
	binary.LittleEndian.PutUint64(b, p.ts)
	commit := uint64(int64(int32(uint32(len(p.data)) | p.flags)))
	binary.LittleEndian.PutUint64(b[8:], commit)
	copy(b[16:], p.data)
	copy(b[16+len(p.data):], p.tail)
	return b
}

func events(t *testing.T, b []byte) ([]Event, error) {
	t.Helper()
	r, err := ReadPage(b, DefaultPageLayout)
	if err != nil {
		return nil, err
	}
	var evs []Event
	for r.Next() {
		evs = append(evs, r.Event())
	}
	return evs, r.Err()
}

func TestPageEventTypes(t *testing.T) {
	p := &page{ts: 1000}
	p.word(hdr(2, 5), 7, 0xaaaa)     // data, 8 bytes, +5
	p.word(hdr(30, 3), 2)            // time extend: +(2<<27 | 3)
	p.word(hdr(1, 0), 8)             // data at that time
	p.word(hdr(29, 9), 4)            // discarded event, 4 bytes past its header: no time
	p.word(hdr(0, 1), 12, 9, 0xbbbb) // long form: array[0]=12, 8 bytes of data
	p.word(hdr(31, 77), 0)           // absolute: 77
	p.word(hdr(1, 2), 10)            // data at 79
	p.word(hdr(29, 0))               // null padding: the end
	p.word(hdr(1, 0), 11)            // never read
	evs, err := events(t, p.bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		ts  uint64
		typ uint16
		n   int
	}{{1005, 7, 8}, {1005 + 2<<27 + 3, 8, 4}, {1005 + 2<<27 + 3 + 1, 9, 8}, {79, 10, 4}}
	if len(evs) != len(want) {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	for i, w := range want {
		if evs[i].Timestamp != w.ts || evs[i].Type != w.typ || len(evs[i].Data) != w.n {
			t.Errorf("event %d: %d %d %d bytes, want %+v", i, evs[i].Timestamp, evs[i].Type, len(evs[i].Data), w)
		}
	}
}

func TestTimeStampUpperBits(t *testing.T) {
	// A clock past 2^59: the stamp's 5 top bits come from the page's time.
	base := uint64(3)<<59 | 100
	p := &page{ts: base}
	p.word(hdr(31, 50), 0) // 50 < 100: the low bits wrapped past 2^59
	p.word(hdr(1, 0), 1)
	evs, err := events(t, p.bytes())
	if err != nil || len(evs) != 1 {
		t.Fatal(evs, err)
	}
	if want := uint64(4)<<59 | 50; evs[0].Timestamp != want {
		t.Errorf("%#x, want %#x", evs[0].Timestamp, want)
	}
	p = &page{ts: base}
	p.word(hdr(31, 150), 0)
	p.word(hdr(1, 0), 1)
	evs, _ = events(t, p.bytes())
	if want := uint64(3)<<59 | 150; len(evs) != 1 || evs[0].Timestamp != want {
		t.Errorf("%+v, want %#x", evs, want)
	}
}

func TestPageLost(t *testing.T) {
	p := &page{ts: 1, flags: missedEvents | missedStored, tail: binary.LittleEndian.AppendUint64(nil, 42)}
	p.word(hdr(1, 0), 1)
	r, err := ReadPage(p.bytes(), DefaultPageLayout)
	if err != nil || !r.Header.Lost || !r.Header.LostCountKnown || r.Header.LostCount != 42 || r.Header.DataSize != 8 {
		t.Errorf("%+v %v", r, err)
	}
	// 32-bit kernel: commit and the count are 4 bytes.
	b := make([]byte, 64)
	binary.LittleEndian.PutUint32(b[8:], 8|missedEvents|missedStored)
	binary.LittleEndian.PutUint32(b[12:], hdr(1, 0))
	binary.LittleEndian.PutUint32(b[16:], 1)
	binary.LittleEndian.PutUint32(b[20:], 5)
	r, err = ReadPage(b, PageLayout{CommitOffset: 8, CommitSize: 4, DataOffset: 12})
	if err != nil || r.Header.LostCount != 5 || !r.Next() || r.Next() {
		t.Errorf("32-bit page: %+v %v", r, err)
	}
}

func TestPageMalformed(t *testing.T) {
	for name, p := range map[string]*page{
		"record past data": (&page{}).word(hdr(3, 0), 1),
		"array[0] < 4":     (&page{}).word(hdr(0, 0), 2, 1),
		"array[0] past":    (&page{}).word(hdr(0, 0), 400, 1),
		"extend cut":       (&page{}).word(hdr(30, 0)),
		"discard past":     (&page{}).word(hdr(29, 1), 100),
		"trailing bytes":   &page{data: []byte{1, 0, 0}},
	} {
		if _, err := events(t, p.bytes()); err == nil {
			t.Errorf("%s: no error", name)
		} else if pe := (*PageError)(nil); !errors.As(err, &pe) {
			t.Errorf("%s: %T", name, err)
		}
	}
	big := (&page{}).bytes()
	binary.LittleEndian.PutUint64(big[8:], 5000)
	if _, err := ReadPage(big, DefaultPageLayout); err == nil {
		t.Error("commit past the page read")
	}
	if _, err := ReadPage(make([]byte, 10), DefaultPageLayout); err == nil {
		t.Error("a 10-byte page read")
	}
	stored := (&page{flags: missedEvents | missedStored, data: make([]byte, 4076)}).bytes()
	if _, err := ReadPage(stored, DefaultPageLayout); err == nil {
		t.Error("a count stored past the page read")
	}
}

func ExampleReadPage() {
	p := (&page{ts: 500}).word(hdr(1, 20), 7)
	r, _ := ReadPage(p.bytes(), DefaultPageLayout)
	for r.Next() {
		e := r.Event()
		fmt.Println(e.Timestamp, e.Type)
	}
	// Output: 520 7
}

func TestPageLongFormRounded(t *testing.T) {
	// array[0] of 11: 7 bytes of record, read as 8, the next event after.
	p := (&page{ts: 10}).word(hdr(0, 1), 11, 5, 0xcc).word(hdr(1, 1), 6)
	evs, err := events(t, p.bytes())
	if err != nil || len(evs) != 2 || len(evs[0].Data) != 8 || evs[1].Type != 6 || evs[1].Timestamp != 12 {
		t.Errorf("%+v %v", evs, err)
	}
}
