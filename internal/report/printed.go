package report

import (
	"io"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/sweep"
)

// Printed is a raw file's result as the commands print it: measure, curve,
// compare and bench after measuring, and analyze reading the file they
// wrote, all through Print, so re-judging a file gives exactly the
// command's result.
type Printed struct {
	// Value is what --json encodes.
	Value any
	// Text writes the result as text.
	Text func(io.Writer)
	// Partial is set when the measurement was stopped early.
	Partial bool
	// Unusable is a Windows bench's error when no candidate could be
	// judged (sweep.Result.Usable); nil otherwise.
	Unusable error
}

// Judging is how Print judges and labels a file.
type Judging struct {
	// Prefs judges a bench file.
	Prefs sweep.Preferences
	// Rows prints every row of a Windows bench.
	Rows bool
	// RawPath is where the file was written ("" when it is being read).
	RawPath string
	// Methods and Settings order a compare's matrix (nil: as the file
	// has them).
	Methods, Settings []string
}

// Print judges f by what wrote it and returns the result to print.
func Print(f *rawfile.File, j Judging) Printed {
	switch {
	case f.Command == "compare":
		c := CompareOf(f, sweep.JudgeCompare(f, j.Methods, j.Settings))
		c.RawFile = j.RawPath
		return Printed{Value: c, Text: func(w io.Writer) { WriteCompare(w, c) }, Partial: c.Partial}
	case f.Command == "curve":
		c := CurveOf(f, sweep.JudgeCurve(f))
		c.RawFile = j.RawPath
		return Printed{Value: c, Text: func(w io.Writer) { WriteCurve(w, c) }, Partial: c.Partial}
	case f.Bench == nil:
		m := MeasurementOf(f, &f.Points[0])
		m.RawFile = j.RawPath
		return Printed{Value: m, Text: func(w io.Writer) { WriteMeasurement(w, m) }, Partial: f.Points[0].Stopped}
	case f.Query.Linux != nil:
		b := SlackBenchOf(f, sweep.JudgeSlackFile(f, j.Prefs))
		b.RawFile = j.RawPath
		return Printed{Value: b, Text: func(w io.Writer) { WriteSlackBench(w, b) }, Partial: b.Result.Partial}
	}
	b := BenchOf(f, sweep.JudgeFile(f, j.Prefs))
	b.RawFile = j.RawPath
	return Printed{Value: b, Text: func(w io.Writer) { WriteBench(w, b, j.Rows) }, Partial: b.Result.Partial, Unusable: b.Result.Usable()}
}
