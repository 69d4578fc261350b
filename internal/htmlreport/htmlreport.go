// Package htmlreport renders tickscope's results as one self-contained HTML
// page (--html and `tickscope report`): inline SVG charts and CSS, each
// chart with its numbers in a table beside it, readable without JavaScript
// and offline (no script, no font, no http(s) reference), so that it can be
// attached to a bug report.
//
// It renders, never judges: it receives what internal/report's builders
// produce (BenchOf, SlackBenchOf, MeasurementOf, CurveOf, CompareOf, with
// sweep's judgement inside) or explain's Explanation, and the raw file's
// facts (its header and, for measure, the samples themselves, whose time
// series and 1 µs histogram no builder summarises).
//
// The charts are hand-written SVG: gonum/plot's SVG backend embeds its
// fonts in every drawing (hundreds of kB, and a font is what the page must
// not carry), go-echarts draws with JavaScript, and the SVG-only Go chart
// libraries (wcharczuk/go-chart) are no longer maintained. The few shapes
// needed here (lines, bands, bars, points, a heat map) are short to write.
package htmlreport

import (
	"fmt"
	"html"
	"io"
	"strings"
	"time"

	"github.com/tickscope/tickscope/internal/rawfile"
	"github.com/tickscope/tickscope/internal/report"
)

// Write renders result, one of the report builders' values for the raw
// file f, as a page.
func Write(w io.Writer, f *rawfile.File, result any) error {
	p := &page{}
	command := f.Command
	if _, ok := result.(*Explanation); ok {
		command = "explain" // its raw file is a measure file
	}
	p.header(f, command)
	if err := p.draw(f, result); err != nil {
		return err
	}
	_, err := io.WriteString(w, p.finish(command))
	return err
}

// Body renders result's charts and their numbers tables alone, without
// the page's header and document around them, for a page of its own
// (tickscope ui shows a measure's and a bench's this way); Style is the
// CSS they need.
func Body(w io.Writer, f *rawfile.File, result any) error {
	p := &page{}
	if err := p.draw(f, result); err != nil {
		return err
	}
	_, err := io.WriteString(w, p.body.String())
	return err
}

// draw renders result's charts and tables into the page's body.
func (p *page) draw(f *rawfile.File, result any) error {
	switch r := result.(type) {
	case *report.Measurement:
		if len(f.Points) == 0 {
			return fmt.Errorf("html report: the measurement has no samples")
		}
		p.measurement(r, f.Points[0].Running())
	case *report.Bench:
		p.bench(r)
	case *report.SlackBench:
		p.slackBench(r)
	case *report.Curve:
		p.curve(r)
	case *report.Compare:
		p.compare(r)
	case *Explanation:
		p.explanation(r)
	default:
		return fmt.Errorf("html report: nothing to draw for %T", result)
	}
	return nil
}

type page struct {
	body strings.Builder
}

// Style is the pages' CSS, which the charts' classes refer to.
const Style = `body{font-family:sans-serif;margin:16px;color:#111;background:#fff}
h1{font-size:20px;margin:4px 0}h2{font-size:17px;margin:18px 0 6px}
.sim{font-size:44px;font-weight:bold;color:#b00;border:4px solid #b00;padding:4px 12px;display:inline-block;margin:6px 0}
.hdr td{padding:1px 10px 1px 0}
.fig{display:flex;flex-wrap:wrap;gap:12px 16px;align-items:flex-start}
.charts{flex:1 1 100%;min-width:0;display:flex;flex-direction:column;gap:8px}
.plot{box-sizing:border-box;padding:8px 20px 6px 64px;border:1px solid #ccc;background:#fff}
.plot .ct{font-size:14px;font-weight:bold;margin:0 0 4px}
.lgd{font-size:12px;display:flex;flex-wrap:wrap;gap:2px 14px;margin:0 0 6px}
.lgd i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px}
svg.chart,svg.overview{display:block;overflow:visible}
.xlab{font-size:12px;text-align:center;margin-top:2px}
.num{border-collapse:collapse;font-size:12px}.num td,.num th{border:1px solid #bbb;padding:2px 6px;text-align:right}
.num th{background:#eee}.scroll{max-height:360px;max-width:100%;overflow:auto}
.tx{font-size:11px;text-anchor:middle}.ty{font-size:11px;text-anchor:end}
.yl{font-size:12px;text-anchor:middle}.m{font-size:12px;font-weight:bold}.m.r{text-anchor:end}.off{font-size:10px;text-anchor:middle}.w{color:#a50}
@media (max-width:600px){body{margin:8px}.sim{font-size:28px;border-width:3px}.tx.minor{display:none}.plot{padding-right:12px}}`

func (p *page) header(f *rawfile.File, command string) {
	q := f.Query
	title := "tickscope " + command
	fmt.Fprintf(&p.body, "<h1>%s</h1>\n", html.EscapeString(title))
	if f.Simulated != "" {
		fmt.Fprintf(&p.body, `<div class="sim">SIMULATED: %s</div><p>Computed on the model of Windows timers (scenario %s), not measured on a machine.</p>`+"\n",
			html.EscapeString(f.Simulated), html.EscapeString(f.Simulated))
	}
	machine, build := "", ""
	if q != nil {
		machine = fmt.Sprintf("%s/%s, %d CPUs", q.OS, q.Arch, q.CPUs)
		build = report.OSBuild(q)
		if q.Windows != nil && q.Windows.Product != "" {
			build = q.Windows.Product + " (" + build + ")"
		}
	}
	rows := [][2]string{
		{"machine", machine},
		{"OS build", build},
		{"when", f.Created.UTC().Format(time.RFC3339)},
		{"tool version", f.Tool.Name + " " + f.Tool.Version},
		{"method", f.Method},
	}
	if load := report.LoadOf(f); load != nil {
		rows = append(rows, [2]string{"load", load.String()})
	}
	p.body.WriteString(`<table class="hdr">`)
	for _, r := range rows {
		fmt.Fprintf(&p.body, "<tr><td>%s</td><td>%s</td></tr>", r[0], html.EscapeString(r[1]))
	}
	p.body.WriteString("</table>\n")
}

func (p *page) finish(command string) string {
	return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>tickscope " + html.EscapeString(command) +
		"</title><style>" + Style + "</style></head><body>\n" + p.body.String() + "</body></html>\n"
}

// figure puts charts, stacked, and their numbers table under them.
func (p *page) figure(heading, table string, charts ...*chart) {
	fmt.Fprintf(&p.body, "<h2>%s</h2>\n<div class=\"fig\"><div class=\"charts\">", html.EscapeString(heading))
	for _, c := range charts {
		p.body.WriteString(c.String())
	}
	fmt.Fprintf(&p.body, "</div>\n<div class=\"scroll\">%s</div></div>\n", table)
}

func (p *page) warnings(ws []string) {
	for _, w := range ws {
		fmt.Fprintf(&p.body, "<p class=\"w\">warning: %s</p>\n", html.EscapeString(w))
	}
}

// table renders a numbers table; cells are escaped.
func table(head []string, rows [][]string) string {
	var b strings.Builder
	b.WriteString(`<table class="num"><tr>`)
	for _, h := range head {
		fmt.Fprintf(&b, "<th>%s</th>", html.EscapeString(h))
	}
	b.WriteString("</tr>")
	for _, r := range rows {
		b.WriteString("<tr>")
		for _, c := range r {
			fmt.Fprintf(&b, "<td>%s</td>", html.EscapeString(c))
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</table>")
	return b.String()
}

func msOf(ns int64) float64 { return float64(ns) / 1e6 }

func fms(ns int64) string { return fmt.Sprintf("%.3f", msOf(ns)) }

func pct(v float64) string { return fmt.Sprintf("%.1f %%", v*100) }
