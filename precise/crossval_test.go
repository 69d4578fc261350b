package precise

import (
	"cmp"
	"flag"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

var policySweep = flag.Bool("policy-sweep", false, "run the margin-policy cross-validation (TestMarginPolicyCrossValidation): minutes")

// sweepConfigs is the grid the default is chosen from.
func sweepConfigs() []policyConfig {
	cfgs := []policyConfig{previousDefault}
	for _, shift := range []uint{4, 5} {
		for _, memory := range [][2]int{{0, 0}, {4096, 10}, {4096, 20}, {4096, 40}, {16384, 10}} {
			for _, missHold := range []int{0, 16, 32} {
				cfgs = append(cfgs, policyConfig{tail: DefaultTail, warmup: calWindow, peakShift: shift, missHold: missHold, memory: memory[0], share: memory[1]})
			}
		}
	}
	return cfgs
}

func (c policyConfig) String() string {
	s := fmt.Sprintf("p%g", 100*c.tail)
	if c.guard > 0 {
		s += fmt.Sprintf(", guard p%g", float64(c.guard)/100)
	}
	if c.memory > 0 {
		s += fmt.Sprintf(", memory %d > %g %%", c.memory, float64(c.share)/100)
	}
	if c.missHold > 0 {
		s += fmt.Sprintf(", miss-hold %d", c.missHold)
	}
	if c.warmup != calWindow || c.peakShift != peakShift {
		s += fmt.Sprintf(", warm-up %d, peak 1/%d", c.warmup, 1<<c.peakShift)
	}
	return s
}

// TestMarginPolicyCrossValidation chooses the margin policy by
// leave-one-family-out: for each family, the config chosen on all the
// others (the one that keeps the promise on every trace of theirs, under
// both schedules, and spins least, as the mean over those families of
// their median spin ratio) is replayed on the family left out, and its
// worst case there is reported. The config chosen on every family must be
// the library's default. Minutes of CPU: behind -policy-sweep.
func TestMarginPolicyCrossValidation(t *testing.T) {
	if !*policySweep {
		t.Skip("the sweep takes minutes: run it with -policy-sweep")
	}
	perFamily := cmp.Or(*policyTraces, 100)
	traces := allTraces(t, perFamily)
	cfgs := sweepConfigs()
	scores := make([]map[string]worst, len(cfgs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, cfg := range cfgs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			byFamily := judgeAll(func(tr trace) policy { return onTrace(newPolicy(cfg, tr.fixed), tr) }, traces)
			scores[i] = map[string]worst{}
			for name, vs := range byFamily {
				scores[i][name] = worstOf(vs)
			}
		}()
	}
	wg.Wait()
	names := familyNames()
	// choose picks the best config on the families in train.
	choose := func(train []string) int {
		best, bestBroken, bestSpin := -1, 1<<30, 0.0
		for i := range cfgs {
			broken, spin := 0, 0.0
			for _, name := range train {
				broken += scores[i][name].broken
				spin += scores[i][name].medianSpinRatio
			}
			spin /= float64(len(train))
			if broken < bestBroken || (broken == bestBroken && spin < bestSpin) {
				best, bestBroken, bestSpin = i, broken, spin
			}
		}
		return best
	}
	var out strings.Builder
	fmt.Fprintf(&out, "\nLeave one family out (%d configs, %d traces a family, both schedules): the config chosen on the others, replayed on the one left out\n\n", len(cfgs), perFamily)
	fmt.Fprintln(&out, "| family left out | config chosen on the others | broken on the others | broken here | worst p99 − fixed's here (µs) | worst spin / fixed's here | median spin / fixed's here |")
	fmt.Fprintln(&out, "| --- | --- | --- | --- | --- | --- | --- |")
	for _, out1 := range names {
		train := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == out1 })
		i := choose(train)
		trainBroken := 0
		for _, name := range train {
			trainBroken += scores[i][name].broken
		}
		w := scores[i][out1]
		fmt.Fprintf(&out, "| %s | %s | %d | %d | %+.1f | %.0f %% | %.0f %% |\n", out1, cfgs[i], trainBroken, w.broken, float64(w.excess)/1e3, 100*w.spinRatio, 100*w.medianSpinRatio)
	}
	all := choose(names)
	fmt.Fprintf(&out, "\nChosen on every family: %s\n\nEvery config, traces (× schedules) broken per family / median spin ratio on quiet:\n\n| config |", cfgs[all])
	for _, name := range names {
		fmt.Fprintf(&out, " %s |", name)
	}
	fmt.Fprintf(&out, " quiet spin |\n| --- |%s --- |\n", strings.Repeat(" --- |", len(names)))
	for i, cfg := range cfgs {
		fmt.Fprintf(&out, "| %s |", cfg)
		for _, name := range names {
			fmt.Fprintf(&out, " %d |", scores[i][name].broken)
		}
		fmt.Fprintf(&out, " %.0f %% |\n", 100*scores[i]["quiet"].medianSpinRatio)
	}
	fmt.Print(out.String())
	if cfgs[all] != defaultConfig {
		t.Errorf("chosen on every family: %s; the library's default is %s", cfgs[all], defaultConfig)
	}
}
