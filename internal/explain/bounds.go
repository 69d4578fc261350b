package explain

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/tickscope/tickscope/internal/attribution"
)

// Bounds of what one run explains, so that its --raw file, whose explain
// section holds every explained wait's causes, names and reasons, stays
// one that analyze reads: within the file's 64 MiB and its strings'
// 4,096 bytes (docs/raw-format.md: Limits). A string is cut before
// printable.Line escapes it, which at most quadruples it. The largest
// section these allow is measured by TestLargestExplainSection.
const (
	// MaxExplained is the most late waits explained: the worst, when
	// more were later than the threshold (a low --over).
	MaxExplained = 1000
	// MaxNamedCauses is the most causes a wait keeps as they are, the
	// largest; the rest are summed by cause, without their names and
	// contexts, so that a wait holds at most this many and one per cause.
	MaxNamedCauses = 16
	// MaxReasons is the most reasons a wait keeps, the first.
	MaxReasons = 8
	// MaxNameBytes bounds a name (a thread, an IRQ, the blocking thread)
	// and MaxTextBytes a context or a reason, before escaping.
	MaxNameBytes = 64
	MaxTextBytes = 256
)

// cuts counts what bound cut, for the result's notes.
type cuts struct {
	late, causes, reasons, strings int
}

// bound holds a to the bounds, counting what it cut in c.
func (c *cuts) bound(a attribution.Attribution) attribution.Attribution {
	a.Blocking = c.cut(a.Blocking, MaxNameBytes)
	if len(a.Reasons) > MaxReasons {
		a.Reasons = slices.Clone(a.Reasons[:MaxReasons])
		c.reasons++
	}
	for i, r := range a.Reasons {
		a.Reasons[i] = c.cut(r, MaxTextBytes)
	}
	causes := slices.Clone(a.Causes)
	for i := range causes {
		causes[i].Name = c.cut(causes[i].Name, MaxNameBytes)
		causes[i].Context = c.cut(causes[i].Context, MaxTextBytes)
	}
	if len(causes) > MaxNamedCauses {
		c.causes++
		// Causes come largest first: the rest are summed into their
		// cause's unnamed entry, kept or added.
		kept := causes[:MaxNamedCauses:MaxNamedCauses]
		for _, x := range causes[MaxNamedCauses:] {
			i := slices.IndexFunc(kept, func(k attribution.Cause) bool { return k.Kind == x.Kind && k.Name == "" && k.Context == "" })
			if i < 0 {
				kept = append(kept, attribution.Cause{Kind: x.Kind})
				i = len(kept) - 1
			}
			kept[i].NS += x.NS
		}
		slices.SortStableFunc(kept, func(p, q attribution.Cause) int { return cmp.Compare(q.NS, p.NS) })
		causes = kept
	}
	if a.Causes != nil {
		a.Causes = causes
	}
	return a
}

// cut gives s cut to at most n bytes, at a character's start, ending in
// "…".
func (c *cuts) cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	c.strings++
	end := n - len("…")
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}

// notes say what was cut.
func (c cuts) notes(late int) []string {
	var out []string
	if c.late > 0 {
		out = append(out, fmt.Sprintf("%d waits were later than the threshold: the %d worst are explained, and the aggregate is theirs", late, MaxExplained))
	}
	if c.causes > 0 {
		out = append(out, fmt.Sprintf("%d late waits had more than %d causes: past the %d largest, each cause's are summed without names", c.causes, MaxNamedCauses, MaxNamedCauses))
	}
	if c.reasons > 0 {
		out = append(out, fmt.Sprintf("%d late waits had more than %d reasons: the first %d are kept", c.reasons, MaxReasons, MaxReasons))
	}
	if c.strings > 0 {
		out = append(out, fmt.Sprintf("%d names or texts were cut (…) to %d bytes (names) or %d (contexts, reasons)", c.strings, MaxNameBytes, MaxTextBytes))
	}
	return out
}
