package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/tickscope/tickscope/internal/stats"
	"github.com/tickscope/tickscope/internal/sweep"
)

// A figure with its interval is shown in one of two scales: the Windows
// bench's latency in ms, the Linux bench's lateness (latency − delay) in
// signed µs.
type scale struct {
	// originNs is subtracted from every figure (the Linux bench's delay).
	originNs float64
	lateness bool
}

// OneSidedNote is what a one-sided interval says of its upper end, and
// UnboundedNote what an unbounded one says.
const (
	OneSidedNote  = "too few samples to bound it above"
	UnboundedNote = "no 95 % interval: too few samples to bound it"
)

// CILabel names an interval's level: "95 % CI", or where the samples
// cannot reach it (the range of too few samples) the coverage they give.
func CILabel(iv stats.Interval) string {
	if iv.Coverage > 0 && iv.Coverage < 0.95 {
		return fmt.Sprintf("%.1f %% CI", math.Floor(1000*iv.Coverage)/10)
	}
	return "95 % CI"
}

// interval renders a figure and its 95 % interval, or where the samples
// cannot bound it above (stats.Interval.OneSided) its 95 % lower bound.
func (s scale) interval(iv stats.Interval) string {
	if s.lateness {
		if iv.OneSided {
			return fmt.Sprintf("%s µs  (95 %% one-sided: at least %s µs; %s)", signedUs(iv.Estimate-s.originNs), signedUs(iv.Lo-s.originNs), OneSidedNote)
		}
		return fmt.Sprintf("%s µs  (%s %s .. %s µs)", signedUs(iv.Estimate-s.originNs), CILabel(iv), signedUs(iv.Lo-s.originNs), signedUs(iv.Hi-s.originNs))
	}
	if iv.OneSided {
		return fmt.Sprintf("%.4f ms  (95 %% one-sided: at least %.4f ms; %s)", iv.Estimate/1e6, iv.Lo/1e6, OneSidedNote)
	}
	return fmt.Sprintf("%.4f ms  (%s %.4f .. %.4f ms)", iv.Estimate/1e6, CILabel(iv), iv.Lo/1e6, iv.Hi/1e6)
}

// difference renders a difference of two figures and its 95 % interval, in
// µs on either scale (a difference has no origin).
func difference(iv stats.Interval) string {
	if iv.Unbounded {
		return fmt.Sprintf("%s µs (%s)", signedUs(iv.Estimate), UnboundedNote)
	}
	return fmt.Sprintf("%s µs (%s %s .. %s µs)", signedUs(iv.Estimate), CILabel(iv), signedUs(iv.Lo), signedUs(iv.Hi))
}

// signedUs renders ns as a signed number of µs with one decimal.
func signedUs(ns float64) string {
	us := math.Round(ns/100) / 10
	if us == 0 {
		us = 0 // no "-0.0"
	}
	return fmt.Sprintf("%+.1f", us)
}

// writeConfidence renders what the user acts on with its intervals: the
// recommendation's p50 and p99 and its margin over the runner-up, named
// (or, when there is none, explained) by runnerUp.
func writeConfidence(p *printer, c *sweep.Confidence, s scale, runnerUp string) {
	if c == nil {
		return
	}
	p.kv("p50", s.interval(c.P50))
	p.kv("p99", s.interval(c.P99))
	p.kv("runner-up", runnerUp)
	if c.MarginP50 != nil && c.MarginP99 != nil {
		p.kv("", "its p50 "+difference(*c.MarginP50)+", p99 "+difference(*c.MarginP99)+" against the recommendation")
	}
	p.kv("intervals", MethodOf(c))
}

// MethodOf is how a confidence's intervals were computed, in words, with
// the number of candidates they were widened for.
func MethodOf(c *sweep.Confidence) string {
	if c.Candidates < 1 {
		return c.Method
	}
	return strings.Replace(c.Method, "the candidates", fmt.Sprintf("the %d candidates", c.Candidates), 1)
}

// equivalenceMark is a candidate's mark in the list when the latency pick
// found it equivalent to the lowest p50: its difference from it, with the
// interval that could not show it noticeable.
func equivalenceMark(vsBest *stats.Interval) string {
	if vsBest == nil {
		return "equivalent"
	}
	iv := *vsBest
	return fmt.Sprintf("equivalent: p50 %s µs, 95 %% CI %s .. %s µs", signedUs(iv.Estimate), signedUs(iv.Lo), signedUs(iv.Hi))
}

// candidateMark is the note after one of a bench's candidates (a band on
// Windows, a setting on Linux), "" for none: recommended (and how it
// compares with the best when equivalent), dominated (what dominates it,
// "" when nothing does), equivalent, or failing a gate.
func candidateMark(recommended, equivalent bool, vsBest *stats.Interval, dominated string, pass bool) string {
	switch {
	case recommended && equivalent:
		return "  <- recommended (" + equivalenceMark(vsBest) + ")"
	case recommended:
		return "  <- recommended"
	case dominated != "":
		return "  (dominated: " + dominated + ")"
	case equivalent:
		return "  (" + equivalenceMark(vsBest) + ")"
	case !pass:
		return "  (fails a gate)"
	}
	return ""
}
