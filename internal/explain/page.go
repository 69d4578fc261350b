package explain

import (
	"strings"

	"github.com/tickscope/tickscope/internal/htmlreport"
	"github.com/tickscope/tickscope/internal/printable"
)

// Page is the result as --html draws it: the text's header and observer
// effect, the aggregate by cause, and the worst waits (as many as the
// text shows one by one) split into their causes.
func (r *Result) Page(worst int) *htmlreport.Explanation {
	var head strings.Builder
	r.writeHeader(&head)
	e := &htmlreport.Explanation{Summary: lines(head.String()), Late: r.Aggregate.Late, LatenessNs: r.Aggregate.LatenessNs}
	if r.ObserverEffect != nil {
		var obs strings.Builder
		writeObserver(&obs, r.ObserverEffect)
		e.Observer = lines(obs.String())
	}
	for _, s := range r.Aggregate.Causes {
		c := htmlreport.ExplainedCause{Cause: s.Cause, Ns: s.Ns, Share: s.Share, Waits: s.Waits}
		for _, n := range s.Names {
			c.Names = append(c.Names, htmlreport.ExplainedName{Name: n.Name, Ns: n.Ns})
		}
		e.Causes = append(e.Causes, c)
	}
	for i, l := range r.Late {
		if i == worst {
			break
		}
		w := htmlreport.ExplainedWait{Index: l.Index, LatenessNs: l.LatenessNs, ArmedLate: l.ArmedLate, NotAttributed: l.NotAttributed}
		for _, c := range l.Causes {
			w.Parts = append(w.Parts, htmlreport.ExplainedPart{Cause: c.Cause, Name: c.Name, Context: c.Context, Ns: c.Ns})
		}
		e.Worst = append(e.Worst, w)
	}
	var notes []string
	if r.Window != nil {
		notes = append(notes, r.Window.Notes...)
	}
	for _, n := range append(notes, r.Notes...) {
		e.Notes = append(e.Notes, printable.Message(n))
	}
	return e
}

func lines(s string) []string { return strings.Split(strings.TrimSuffix(s, "\n"), "\n") }
