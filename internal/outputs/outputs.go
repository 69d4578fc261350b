// Package outputs writes the picture outputs of a measuring command:
// --html (every measuring command and analyze) and, on measure,
// --cyclictest-json and --histfile. Each file follows internal/outfile's
// rule: only regular files, checked and its temporary created before the
// command runs (so a bad path exits 2 before anything is measured), and
// written atomically after.
package outputs

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tickscope/tickscope/internal/cyclictest"
	"github.com/tickscope/tickscope/internal/htmlreport"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
)

// Files are a command's picture output files: the paths given to
// --html, --cyclictest-json and --histfile ("" for one not given).
type Files struct {
	HTML, CyclictestJSON, Histfile string
	open                           map[string]*outfile.File
}

// Distinct refuses, as a usage error, an output file that is also another
// output (raw, --raw's path, included) or a file the command reads
// (inputs: analyze's FILE): writing it would replace the data the command
// was given, or one output with another.
func (o *Files) Distinct(raw string, inputs []string) error {
	type named struct{ what, path string }
	var in, outputs []named
	for _, a := range inputs {
		in = append(in, named{"the file read", a})
	}
	if raw != "" {
		outputs = append(outputs, named{"--raw", raw})
	}
	for _, f := range []named{{"--html", o.HTML}, {"--cyclictest-json", o.CyclictestJSON}, {"--histfile", o.Histfile}} {
		if f.path != "" {
			outputs = append(outputs, f)
		}
	}
	for i, out := range outputs {
		for _, other := range append(append([]named{}, in...), outputs[:i]...) {
			if samePath(out.path, other.path) {
				return options.BadFlag(strings.TrimPrefix(out.what, "--"), out.path, "is also %s: give each output a file of its own", other.what)
			}
		}
	}
	return nil
}

// samePath reports whether writing a and b would replace the same file:
// the same path once symlinks are followed, or the same existing file.
func samePath(a, b string) bool {
	ta, errA := outfile.Target(a)
	tb, errB := outfile.Target(b)
	if errA != nil || errB != nil {
		return false // the output's own check names what is wrong
	}
	if absA, err := filepath.Abs(ta); err == nil {
		ta = absA
	}
	if absB, err := filepath.Abs(tb); err == nil {
		tb = absB
	}
	if ta == tb {
		return true
	}
	fa, errA := os.Stat(ta)
	fb, errB := os.Stat(tb)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// Open checks every named path and creates its temporary file.
func (o *Files) Open() error {
	o.open = map[string]*outfile.File{}
	for _, f := range []struct{ flag, path string }{{"html", o.HTML}, {"cyclictest-json", o.CyclictestJSON}, {"histfile", o.Histfile}} {
		if f.path == "" {
			continue
		}
		out, err := outfile.Open(f.flag, f.path)
		if err != nil {
			o.Close()
			return err
		}
		o.open[f.flag] = out
	}
	return nil
}

// Close removes the temporaries of the files not written.
func (o *Files) Close() {
	for _, f := range o.open {
		f.Close()
	}
}

// Write writes the files o opened for the raw file f and the
// command's result (a value of one of report's builders), after the command
// printed it: err is the printing's error, returned first. Nil files, or
// files not opened, write nothing.
func Write(o *Files, f *rawfile.File, result any, err error) error {
	if o == nil || o.open == nil || err != nil {
		return err // a command that failed to print leaves no files
	}
	if out := o.open["html"]; out != nil {
		err = firstErr(err, out.Commit(func(w io.Writer) error { return htmlreport.Write(w, f, result) }))
	}
	if out := o.open["cyclictest-json"]; out != nil {
		cmdline := strings.Join(append([]string{"tickscope"}, os.Args[1:]...), " ")
		err = firstErr(err, out.Commit(func(w io.Writer) error { return cyclictest.WriteJSON(w, f, cmdline) }))
	}
	if out := o.open["histfile"]; out != nil {
		err = firstErr(err, out.Commit(func(w io.Writer) error {
			return cyclictest.WriteHistfile(w, f.Points[0].Running(), f.DelayNs)
		}))
	}
	return err
}

func firstErr(err, next error) error {
	if err != nil {
		return err
	}
	return next
}
