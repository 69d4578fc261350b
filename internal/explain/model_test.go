package explain

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tickscope/tickscope/internal/etwkernel"
	"github.com/tickscope/tickscope/internal/sim"
	"github.com/tickscope/tickscope/internal/timerinfo"
)

// The tolerances the attribution is held to against the model's truth:
// each cause of each late wait, and each cause's share of all the late
// waits' lateness. The model's events are on the samples' clock (ns), so
// the attribution should be exact; the tolerances leave room for a
// rounding, not for a cause moved elsewhere.
const (
	truthWaitTolNs = 1000 // 1 µs
	truthShareTol  = 0.01 // one percentage point
)

// runModel runs explain on a model host of ks at 0.5 ms, with k's events
// passed through filter (nil: as logged), and gives the result and the
// model's truth of the waits judged, by index.
func runModel(t *testing.T, ks sim.KernelScenario, seed uint64, filter func(etwkernel.Event) bool) (*Result, []sim.Truth) {
	t.Helper()
	host, k, err := sim.NewKernelHostFor(ks, seed)
	if err != nil {
		t.Fatal(err)
	}
	q, err := host.Query()
	if err != nil {
		t.Fatal(err)
	}
	var km KernelModel = k
	if filter != nil {
		km = filteredKernel{k, filter}
	}
	o := Options{Delay: time.Millisecond, Samples: 2000, Over: 600 * time.Microsecond, Layer: LayerAuto, Worst: 10, Setting: timerinfo.Setting{Resolution100ns: 5000}}
	res, file, err := Run(context.Background(), host, q, ModelSystem(km, ks.Name), o, Reporting{})
	if err != nil {
		t.Fatal(err)
	}
	if file == nil || !res.Simulated || res.Layer != 1 || res.Trace == nil {
		t.Fatalf("simulated %v, layer %d, trace %v", res.Simulated, res.Layer, res.Trace)
	}
	truth := k.Truth()
	// The warm-up's waits come first; no wait is untraced on the model.
	return res, truth[len(truth)-res.Waits:]
}

type filteredKernel struct {
	*sim.Kernel
	keep func(etwkernel.Event) bool
}

func (f filteredKernel) Events() []etwkernel.Event {
	var out []etwkernel.Event
	for _, ev := range f.Kernel.Events() {
		if f.keep(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// truthErrors compares the attribution of res's late waits with what the
// model says delayed them: each cause's time in each wait, and each
// cause's share of all the late waits' lateness, by name. It also asks
// that storport.sys's DPCs be a cause of at least a fifth of it, as the
// scenario makes them, so that a model without them fails.
func truthErrors(res *Result, truth []sim.Truth) []string {
	var errs []string
	want := map[string]int64{} // cause|name over the late waits
	got := map[string]int64{}
	var lateness int64
	for _, l := range res.Late {
		tr := truth[l.Index]
		exp := map[string]int64{"timer tick|": tr.AllowedNs, "clock interrupt to ready|": tr.ClockToReadyNs}
		for img, ns := range tr.DPCNs {
			exp["DPC|"+img] = ns
		}
		for img, ns := range tr.ISRNs {
			exp["ISR|"+img] = ns
		}
		if tr.OtherNs > 0 {
			exp[fmt.Sprintf("other threads ran|tid %d (priority %d)", tr.OtherTID, sim.OtherPriority)] = tr.OtherNs
		}
		var sum int64
		for _, ns := range exp {
			sum += ns
		}
		exp["unexplained|"] = l.LatenessNs - sum // the call delay after the switch in
		att := map[string]int64{}
		for _, c := range l.Causes {
			name := c.Name
			if c.Cause == string(KindTick) {
				name = "" // the period granted, which the model does not say
			}
			att[c.Cause+"|"+name] += c.Ns
		}
		for key, ns := range exp {
			if d := att[key] - ns; d > truthWaitTolNs || d < -truthWaitTolNs {
				errs = append(errs, fmt.Sprintf("wait %d: %s attributed %d ns, the model put in %d", l.Index, key, att[key], ns))
			}
		}
		for key, ns := range att {
			if _, ok := exp[key]; !ok && ns > truthWaitTolNs {
				errs = append(errs, fmt.Sprintf("wait %d: %s attributed %d ns, which the model did not put in", l.Index, key, ns))
			}
			got[key] += ns
		}
		for key, ns := range exp {
			want[key] += ns
		}
		lateness += l.LatenessNs
	}
	if len(res.Late) == 0 || lateness == 0 {
		return append(errs, "no late wait")
	}
	for key, ns := range want {
		ws, gs := float64(ns)/float64(lateness), float64(got[key])/float64(lateness)
		if math.Abs(ws-gs) > truthShareTol {
			errs = append(errs, fmt.Sprintf("%s: %.1f%% of the late waits' lateness attributed, the model put in %.1f%%", key, 100*gs, 100*ws))
		}
	}
	if s := float64(want["DPC|storport.sys"]) / float64(lateness); s < 0.2 {
		errs = append(errs, fmt.Sprintf("storport.sys's DPCs are %.1f%% of the late waits' lateness, not the fifth the scenario makes them", 100*s))
	}
	return errs
}

func dpcStorm(t *testing.T) sim.KernelScenario {
	t.Helper()
	ks, ok := sim.FindKernel("dpc-storm")
	if !ok {
		t.Fatal("no dpc-storm scenario")
	}
	return ks
}

// On the model, whose truth is known, the Windows path (the model's
// kernel events, etwTrace, etwkernel.Attribute, fromETW, the aggregate)
// splits each late wait's lateness into the causes the model put in:
// each within 1 µs in every late wait, each cause's share of the late
// waits' lateness within one percentage point, storport.sys's DPCs among
// them and named in the aggregate and the text.
func TestModelAttributionMatchesTruth(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		res, truth := runModel(t, dpcStorm(t), seed, nil)
		if errs := truthErrors(res, truth); len(errs) > 0 {
			t.Errorf("seed %d: %d late waits: %d differences from the model, first: %s", seed, len(res.Late), len(errs), strings.Join(errs[:min(5, len(errs))], "; "))
		}
		var dpc *Share
		for i, s := range res.Aggregate.Causes {
			if s.Cause == "DPC" {
				dpc = &res.Aggregate.Causes[i]
			}
		}
		if dpc == nil || len(dpc.Names) == 0 || dpc.Names[0].Name != "storport.sys" || dpc.Share < 0.2 {
			t.Fatalf("seed %d: the aggregate's DPC cause is %+v, want storport.sys first, at least 20%%", seed, dpc)
		}
		t.Logf("seed %d: %d late waits of %d, %.1f%% explained; DPC %.1f%% (storport.sys %.1f%%)", seed, len(res.Late), res.Waits, 100*res.Aggregate.ExplainedShare, 100*dpc.Share, 100*dpc.Names[0].Share)
		var text bytes.Buffer
		res.WriteText(&text, 10)
		if !strings.Contains(text.String(), "\n  DPC ") || !strings.Contains(text.String(), "storport.sys") {
			t.Fatalf("seed %d: the text names no DPC of storport.sys:\n%s", seed, text.String())
		}
	}
}

// The check above fails when the model's DPCs are taken away: from the
// events only (their time is then the timer's, by the events left), or
// from the model (storport.sys is then no cause).
func TestModelTruthCheckFailsWithoutDPCs(t *testing.T) {
	res, truth := runModel(t, dpcStorm(t), 1, func(ev etwkernel.Event) bool { _, dpc := ev.(*etwkernel.DPC); return !dpc })
	if errs := truthErrors(res, truth); len(errs) == 0 {
		t.Error("without the DPC events, the attribution still matched the model's truth")
	} else {
		t.Logf("without the DPC events: %d differences, first: %s", len(errs), errs[0])
	}
	quiet := dpcStorm(t)
	quiet.Drivers = nil
	res, truth = runModel(t, quiet, 1, nil)
	if errs := truthErrors(res, truth); len(errs) == 0 {
		t.Error("without the model's DPC interference, the check passed")
	} else {
		t.Logf("without the model's DPCs: %s", strings.Join(errs, "; "))
	}
}
