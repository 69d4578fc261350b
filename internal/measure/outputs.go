package measure

// The picture outputs of a measurement command: --html (every measuring
// command and analyze) and, on measure, --cyclictest-json and --histfile.
// Each file follows internal/outfile's rule: only regular files, checked and
// its temporary created before the command runs (so a bad path exits 2
// before anything is measured), and written atomically after.

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tickscope/tickscope/internal/cyclictest"
	"github.com/tickscope/tickscope/internal/htmlreport"
	"github.com/tickscope/tickscope/internal/options"
	"github.com/tickscope/tickscope/internal/outfile"
	"github.com/tickscope/tickscope/internal/rawfile"
)

type outputsKey struct{}

// OutputFiles are a command's picture output files.
type OutputFiles struct {
	html, json, hist string
	open             map[string]*outfile.File
}

// RegisterOutputs adds --html to cmd (and with cyclictest, --cyclictest-json and
// --histfile) and wraps its RunE so that the files are opened before it
// runs and their temporaries removed after. It must be called after
// cmd.RunE is set.
func RegisterOutputs(cmd *cobra.Command, cyclictest bool) *OutputFiles {
	o := &OutputFiles{}
	f := cmd.Flags()
	f.StringVar(&o.html, "html", "", "also draw the result as a self-contained HTML page (charts and their numbers) in this file")
	if cyclictest {
		f.StringVar(&o.json, "cyclictest-json", "", "also write the measurement in cyclictest --json's format (lateness in µs) to this file")
		f.StringVar(&o.hist, "histfile", "", "also write cyclictest -h's text histogram (lateness, 1 µs buckets) to this file")
	}
	run := cmd.RunE
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := o.distinct(cmd, args); err != nil {
			return err
		}
		if err := o.Open(); err != nil {
			return err
		}
		defer o.Close()
		ctx := cmd.Context()
		if ctx == nil {
			ctx = context.Background()
		}
		cmd.SetContext(context.WithValue(ctx, outputsKey{}, o))
		return run(cmd, args)
	}
	return o
}

// distinct refuses, as a usage error, an output file that is also another
// output (--raw included) or a file the command reads (analyze's FILE):
// writing it would replace the data the command was given, or one output
// with another.
func (o *OutputFiles) distinct(cmd *cobra.Command, args []string) error {
	type named struct{ what, path string }
	var inputs, outputs []named
	for _, a := range args {
		inputs = append(inputs, named{"the file read", a})
	}
	if f := cmd.Flags().Lookup("raw"); f != nil && f.Value.String() != "" {
		outputs = append(outputs, named{"--raw", f.Value.String()})
	}
	for _, f := range []named{{"--html", o.html}, {"--cyclictest-json", o.json}, {"--histfile", o.hist}} {
		if f.path != "" {
			outputs = append(outputs, f)
		}
	}
	for i, out := range outputs {
		for _, other := range append(append([]named{}, inputs...), outputs[:i]...) {
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
func (o *OutputFiles) Open() error {
	o.open = map[string]*outfile.File{}
	for _, f := range []struct{ flag, path string }{{"html", o.html}, {"cyclictest-json", o.json}, {"histfile", o.hist}} {
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
func (o *OutputFiles) Close() {
	for _, f := range o.open {
		f.Close()
	}
}

// WriteOutputs writes the files registered on cmd for the raw file f and the
// command's result (a value of one of report's builders), after the command
// printed it: err is the printing's error, returned first. A command
// without registered files writes nothing.
func WriteOutputs(cmd *cobra.Command, f *rawfile.File, result any, err error) error {
	var o *OutputFiles
	if ctx := cmd.Context(); ctx != nil {
		o, _ = ctx.Value(outputsKey{}).(*OutputFiles)
	}
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
