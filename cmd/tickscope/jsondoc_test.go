package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tickscope/tickscope/internal/explain"
	"github.com/tickscope/tickscope/internal/global"
	"github.com/tickscope/tickscope/internal/hold"
	"github.com/tickscope/tickscope/internal/inspect"
	"github.com/tickscope/tickscope/internal/report"
	"github.com/tickscope/tickscope/internal/startup"
	"github.com/tickscope/tickscope/internal/timerinfo"
	"github.com/tickscope/tickscope/internal/ui"
	"github.com/tickscope/tickscope/internal/watch"
)

// docFields is what docs/json.md documents for one command's --json: the
// field names in the first column of its tables. Dotted names
// ("result.rows") and the fields of a "### name" subsection ("windows"
// under query) document the keys of nested objects.
type docFields map[string]bool

var (
	backticked = regexp.MustCompile("`([^`]+)`")
	// A section's command is what stands before --json: "## `tickscope
	// bench --json` and ..." is bench, "## `tickscope apply --pid PID
	// --slack D --json`" is "apply --pid PID --slack D".
	sectionCommand = regexp.MustCompile("^## `tickscope ([^`]*?) ?--json`")
	// ui has no --json; its page's JSON is "## `tickscope ui` state" and
	// "## `tickscope ui` outcome".
	uiSection = regexp.MustCompile("^## `tickscope ui` (state|outcome) ")
)

// parseJSONDoc reads docs/json.md into the fields of each command's
// section, keyed by the command ("query", "bench", "startup remove").
func parseJSONDoc(text string) map[string]docFields {
	sections := map[string]docFields{}
	var current docFields
	nested := ""
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "## "):
			current, nested = nil, ""
			if m := sectionCommand.FindStringSubmatch(line); m != nil {
				name := strings.TrimSuffix(m[1], " on|off")
				if strings.Contains(line, " on Linux") {
					name += " on Linux"
				}
				current = docFields{}
				sections[name] = current
			} else if m := uiSection.FindStringSubmatch(line); m != nil {
				current = docFields{}
				sections["ui "+m[1]] = current
			}
		case strings.HasPrefix(line, "### "):
			nested = ""
			if m := backticked.FindStringSubmatch(line); m != nil {
				nested = m[1] + "."
			}
		case current != nil && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| field") && !strings.HasPrefix(line, "| ---"):
			first := strings.SplitN(line, "|", 3)[1]
			for _, m := range backticked.FindAllStringSubmatch(first, -1) {
				current[nested+m[1]] = true
			}
		}
	}
	return sections
}

// undocumented returns the keys of doc, an object printed by --json, that
// fields does not document: every top-level key, and the keys of nested
// objects (or of the objects in nested arrays) wherever the documentation
// breaks that level out into names of its own.
func (fields docFields) undocumented(doc map[string]any) []string {
	var missing []string
	var walk func(prefix string, node map[string]any)
	walk = func(prefix string, node map[string]any) {
		for key, value := range node {
			name := prefix + key
			if !fields[name] && !fields.hasChildren(name) {
				missing = append(missing, name)
				continue
			}
			if !fields.hasChildren(name) {
				continue
			}
			switch v := value.(type) {
			case map[string]any:
				walk(name+".", v)
			case []any:
				for _, item := range v {
					if obj, ok := item.(map[string]any); ok {
						walk(name+".", obj)
					}
				}
			}
		}
	}
	walk("", doc)
	slices.Sort(missing)
	return slices.Compact(missing)
}

func (fields docFields) hasChildren(name string) bool {
	for f := range fields {
		if strings.HasPrefix(f, name+".") {
			return true
		}
	}
	return false
}

func readJSONDoc(t *testing.T) map[string]docFields {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "json.md"))
	if err != nil {
		t.Fatal(err)
	}
	return parseJSONDoc(string(data))
}

func TestParseJSONDoc(t *testing.T) {
	sections := readJSONDoc(t)
	for _, want := range []struct{ section, field string }{
		{"query", "os"},
		{"query", "windows.finest_100ns"},
		{"query", "linux.cpuidle_states"},
		{"bench", "result.rows"},
		{"status", "self.without_request"},
		{"startup remove", "still_raised"},
		{"global", "build_honours_key"},
	} {
		if !sections[want.section][want.field] {
			t.Errorf("docs/json.md: section %q does not document %q (sections: %v)", want.section, want.field, keys(sections))
		}
	}
	fields := docFields{"os": true, "result.rows": true, "result.bands": true}
	doc := map[string]any{"os": "x", "extra": 1, "result": map[string]any{"rows": []any{}, "surprise": true}}
	if got := fields.undocumented(doc); !slices.Equal(got, []string{"extra", "result.surprise"}) {
		t.Errorf("undocumented = %v, want [extra result.surprise]", got)
	}
}

func keys[M ~map[string]V, V any](m M) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// runJSON runs tickscope in this process with args and decodes its
// standard output as one JSON object.
func runJSON(t *testing.T, args ...string) ([]byte, map[string]any) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdout: &stdout, stderr: &stderr}
	if code := a.execute(args); code != 0 {
		t.Fatalf("tickscope %s exited %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var doc map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &doc); err != nil {
		t.Fatalf("tickscope %s printed no JSON object: %v\n%s", strings.Join(args, " "), err, stdout.String())
	}
	return stdout.Bytes(), doc
}

// jsonShapes are the Go types each documented --json prints.
var jsonShapes = map[string]any{
	"query":                     timerinfo.Report{},
	"measure":                   report.Measurement{},
	"bench":                     report.Bench{},
	"bench on Linux":            report.SlackBench{},
	"curve":                     report.Curve{},
	"compare":                   report.Compare{},
	"explain":                   explain.Result{},
	"apply":                     hold.HoldReport{},
	"apply --pid PID --slack D": hold.SlackChange{},
	"status":                    inspect.StatusReport{},
	"verify-global":             global.GlobalCheck{},
	"global":                    global.GlobalResult{},
	"startup remove":            startup.RemoveResult{},
	"watch":                     watch.Event{},
	"who":                       inspect.WhoReport{},
	"ui state":                  ui.State{},
	"ui outcome":                ui.Outcome{},
}

// typeFields lists the JSON names of t's fields, with nested objects (and
// the objects in arrays) as dotted names: what encoding/json prints for t.
func typeFields(t reflect.Type, prefix string, out docFields) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t.PkgPath() == "time" {
		return
	}
	for i := range t.NumField() {
		field := t.Field(i)
		name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
		switch {
		case name == "-" || !field.IsExported():
			continue
		case field.Anonymous && name == "":
			typeFields(field.Type, prefix, out)
			continue
		case name == "":
			name = field.Name
		}
		out[prefix+name] = true
		typeFields(field.Type, prefix+name+".", out)
	}
}

// TestJSONDocMatchesTypes holds docs/json.md and the Go types of every
// --json to each other: every documented field exists, and every field
// printed is documented at each level the documentation breaks out.
func TestJSONDocMatchesTypes(t *testing.T) {
	sections := readJSONDoc(t)
	if got, want := keys(sections), keys(jsonShapes); !slices.Equal(got, want) {
		t.Fatalf("docs/json.md documents %v; the test knows the types of %v", got, want)
	}
	for name, shape := range jsonShapes {
		fields := docFields{}
		typeFields(reflect.TypeOf(shape), "", fields)
		for documented := range sections[name] {
			if !fields[documented] {
				t.Errorf("%s: docs/json.md documents %q, which %T does not print", name, documented, shape)
			}
		}
		for printed := range fields {
			parent, _, nested := cutLast(printed)
			if (!nested || sections[name].hasChildren(parent)) && !sections[name][printed] && !sections[name].hasChildren(printed) {
				t.Errorf("%s: %T prints %q, which docs/json.md does not document", name, shape, printed)
			}
		}
	}
}

func cutLast(name string) (parent, last string, nested bool) {
	i := strings.LastIndex(name, ".")
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}

// TestJSONOutputIsDocumented runs each command that can run here with
// --json, and decodes what it prints into its documented type with
// unknown fields refused, and checks every key against docs/json.md.
// Nothing here holds /dev/cpu_dma_latency.
func TestJSONOutputIsDocumented(t *testing.T) {
	if testing.Short() {
		t.Skip("measures on this machine")
	}
	sections := readJSONDoc(t)
	dir := t.TempDir()
	benchFile := filepath.Join(dir, "bench.json")
	type jsonRun struct {
		section string
		args    []string
	}
	runs := []jsonRun{
		{"query", []string{"query", "--json"}},
		{"measure", []string{"measure", "--samples", "20", "--json"}},
		{"measure", []string{"measure", "--simulate", "narrow-band", "--samples", "20", "--json"}},
		{"bench", []string{"bench", "--simulate", "narrow-band", "--samples", "20", "--raw", benchFile, "--json"}},
		{"bench", []string{"analyze", benchFile, "--json"}},
		{"curve", []string{"curve", "--simulate", "narrow-band", "--from", "1ms", "--to", "3ms", "--samples", "2", "--json"}},
		{"explain", []string{"explain", "--simulate", "dpc-storm", "--samples", "200", "--over", "600us", "--json"}},
		{"verify-global", []string{"verify-global", "--json"}},
		{"status", []string{"status", "--json"}},
		{"who", []string{"who", "--json"}},
		{"who", []string{"who", "--watch", "100ms", "--json"}},
	}
	if runtime.GOOS == "linux" {
		runs = append(runs,
			jsonRun{"compare", []string{"compare", "--methods", "clock-abs,nanosleep", "--settings", "default,slack-1ns", "--cycles", "10", "--json"}},
			jsonRun{"compare", []string{"compare", "--methods", "clock-abs", "--settings", "default", "--cycles", "10", "--load", "1", "--json"}},
			jsonRun{"measure", []string{"measure", "--samples", "20", "--load", "1", "--json"}},
			jsonRun{"explain", []string{"explain", "--samples", "20", "--over", "1ns", "--layer", "0", "--json"}},
			jsonRun{"apply --pid PID --slack D", []string{"apply", "--pid", strconv.Itoa(os.Getpid()), "--slack", "50us", "--json"}},
		)
	}
	for _, run := range runs {
		t.Run(run.args[0], func(t *testing.T) {
			out, doc := runJSON(t, run.args...)
			if missing := sections[run.section].undocumented(doc); len(missing) > 0 {
				t.Errorf("tickscope %s prints fields docs/json.md does not document under %q: %v", strings.Join(run.args, " "), run.section, missing)
			}
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			value := reflect.New(reflect.TypeOf(jsonShapes[run.section])).Interface()
			if err := dec.Decode(value); err != nil {
				t.Errorf("tickscope %s does not decode as %T: %v", strings.Join(run.args, " "), jsonShapes[run.section], err)
			}
		})
	}
}
