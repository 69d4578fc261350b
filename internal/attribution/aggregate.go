package attribution

import (
	"cmp"
	"slices"
)

// Aggregate is the causes of many waits' lateness, worst first.
type Aggregate struct {
	// Late is the number of late waits counted, LatenessNS their lateness:
	// every late wait but those armed late.
	Late       int
	LatenessNS int64
	// ArmedLate waits inherited ArmedLateNS of lateness from the wait
	// before them; they are said once, here, and not in Causes.
	ArmedLate   int
	ArmedLateNS int64
	// NotAttributed waits are those events were lost in; their lateness
	// is in Causes as KindNotAttributed.
	NotAttributed int
	Causes        []Share
}

// Share is one kind of cause's part of the late waits' lateness.
type Share struct {
	Kind Kind
	NS   int64
	// Share is NS over the Aggregate's LatenessNS.
	Share float64
	// Waits is the number of waits it had a part in.
	Waits int
	// Names are who did it (Cause.Name), worst first; Contexts where
	// and in what state it happened (Cause.Context), worst first.
	Names    []NameShare
	Contexts []ContextShare
}

// NameShare is who, within a kind.
type NameShare struct {
	Name  string
	NS    int64
	Share float64
}

// ContextShare is where, within a kind.
type ContextShare struct {
	Context string
	NS      int64
	Share   float64
	// Waits is the number of waits it had a part in.
	Waits int
}

// Sum aggregates attributions: each cause's share of the late waits'
// lateness, worst first, and within each its names, worst first.
func Sum(as []Attribution) Aggregate {
	var g Aggregate
	kinds := map[Kind]*Share{}
	names := map[Kind]map[string]int64{}
	type ctx struct {
		ns    int64
		waits int
	}
	contexts := map[Kind]map[string]*ctx{}
	for _, a := range as {
		if a.LatenessNS <= 0 {
			continue
		}
		if a.ArmedLate {
			g.ArmedLate++
			g.ArmedLateNS += a.LatenessNS
			continue
		}
		g.Late++
		g.LatenessNS += a.LatenessNS
		if a.NotAttributed {
			g.NotAttributed++
		}
		seen := map[Kind]bool{}
		seenAt := map[Cause]bool{}
		for _, c := range a.Causes {
			s := kinds[c.Kind]
			if s == nil {
				s = &Share{Kind: c.Kind}
				kinds[c.Kind] = s
				names[c.Kind] = map[string]int64{}
				contexts[c.Kind] = map[string]*ctx{}
			}
			s.NS += c.NS
			if !seen[c.Kind] {
				s.Waits++
				seen[c.Kind] = true
			}
			if c.Name != "" {
				names[c.Kind][c.Name] += c.NS
			}
			if c.Context != "" {
				x := contexts[c.Kind][c.Context]
				if x == nil {
					x = &ctx{}
					contexts[c.Kind][c.Context] = x
				}
				x.ns += c.NS
				if k := (Cause{Kind: c.Kind, Context: c.Context}); !seenAt[k] {
					x.waits++
					seenAt[k] = true
				}
			}
		}
	}
	share := func(ns int64) float64 {
		if g.LatenessNS == 0 {
			return 0
		}
		return float64(ns) / float64(g.LatenessNS)
	}
	for k, s := range kinds {
		s.Share = share(s.NS)
		for n, ns := range names[k] {
			s.Names = append(s.Names, NameShare{Name: n, NS: ns, Share: share(ns)})
		}
		slices.SortFunc(s.Names, func(p, q NameShare) int {
			if c := cmp.Compare(q.NS, p.NS); c != 0 {
				return c
			}
			return cmp.Compare(p.Name, q.Name)
		})
		for c, x := range contexts[k] {
			s.Contexts = append(s.Contexts, ContextShare{Context: c, NS: x.ns, Share: share(x.ns), Waits: x.waits})
		}
		slices.SortFunc(s.Contexts, func(p, q ContextShare) int {
			if c := cmp.Compare(q.NS, p.NS); c != 0 {
				return c
			}
			return cmp.Compare(p.Context, q.Context)
		})
		g.Causes = append(g.Causes, *s)
	}
	slices.SortFunc(g.Causes, func(p, q Share) int {
		if c := cmp.Compare(q.NS, p.NS); c != 0 {
			return c
		}
		return cmp.Compare(p.Kind, q.Kind)
	})
	return g
}

// ByName is how much of the late waits' lateness a name had, in any
// kind of cause (a thread both blocking and interfering). Contexts are
// not names: a thread an IRQ delay found running is not counted.
func (g Aggregate) ByName(name string) int64 {
	var n int64
	for _, s := range g.Causes {
		for _, x := range s.Names {
			if x.Name == name {
				n += x.NS
			}
		}
	}
	return n
}
