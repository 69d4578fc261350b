package explain

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The page says what the text says: its header and observer-effect
// lines, the aggregate's causes in order, and as many worst waits as
// the text shows one by one, with all their causes.
func TestPageSaysWhatTheTextSays(t *testing.T) {
	sys := &fakeSystem{trace: true, recordCost: 2000}
	h := &fakeHost{late: []int64{1000}, sys: sys}
	res, _, err := Run(context.Background(), h, &timerinfo.Report{OS: "fake"}, sys, Options{Delay: time.Millisecond, Samples: 100, Over: 2 * time.Microsecond, Layer: Layer1, Worst: 10}, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	res.Notes = append(res.Notes, "a note with \x1b[2K")
	var b bytes.Buffer
	res.WriteText(&b, 3)
	text := b.String()
	p := res.Page(3)
	head := strings.Join(p.Summary, "\n") + "\n" + strings.Join(p.Observer, "\n") + "\n"
	if !strings.HasPrefix(text, head) {
		t.Errorf("the page's header and observer effect:\n%s\nare not the text's:\n%s", head, text)
	}
	if len(p.Observer) == 0 || !strings.HasPrefix(p.Observer[0], "observer effect: 100 traced") {
		t.Errorf("observer lines %q", p.Observer)
	}
	if len(p.Worst) != 3 || p.Late != res.Aggregate.Late || p.LatenessNs != res.Aggregate.LatenessNs {
		t.Errorf("%d worst waits, %d late of %d ns: want 3, %d of %d", len(p.Worst), p.Late, p.LatenessNs, res.Aggregate.Late, res.Aggregate.LatenessNs)
	}
	for i, w := range p.Worst {
		l := res.Late[i]
		if w.Index != l.Index || w.LatenessNs != l.LatenessNs || len(w.Parts) != len(l.Causes) {
			t.Errorf("worst wait %d: %+v, want %+v", i, w, l)
		}
		var sum int64
		for _, part := range w.Parts {
			sum += part.Ns
		}
		if sum != w.LatenessNs {
			t.Errorf("wait %d: parts add up to %d of %d ns", w.Index, sum, w.LatenessNs)
		}
	}
	if len(p.Causes) != len(res.Aggregate.Causes) {
		t.Fatalf("%d causes, want %d", len(p.Causes), len(res.Aggregate.Causes))
	}
	for i, c := range p.Causes {
		if s := res.Aggregate.Causes[i]; c.Cause != s.Cause || c.Ns != s.Ns || c.Share != s.Share {
			t.Errorf("cause %d: %+v, want %+v", i, c, s)
		}
	}
	if last := p.Notes[len(p.Notes)-1]; !strings.Contains(text, "note: "+last+"\n") {
		t.Errorf("the page's note %q is not the text's:\n%s", last, text)
	}
}
