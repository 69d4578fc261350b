package htmlreport

import (
	"fmt"
	"math"
	"strings"
)

// chart is one drawing that takes the width of its box: a desktop page and
// a 390 px phone draw the same data with the same text sizes. The plot's
// x positions are percentages of its width and its y positions pixels of
// its fixed height, so text is never scaled (a viewBox would shrink an
// 11 px label to 6 px on a phone). Lines and filled areas, whose points
// cannot be percentages, are drawn in a nested SVG whose x axis stretches
// to the width (preserveAspectRatio none) with strokes that do not
// stretch. The title, the legend and the x axis' label are HTML around the
// drawing, so they wrap on a narrow screen; the y axis' ticks and label
// overflow into the box's left padding. The file needs no script and no
// font of its own (text uses the reader's sans-serif).
type chart struct {
	// b holds the frame, grid and ticks, drawn under the data; data the
	// data, in a group of its own (class "data": the browser test checks
	// it); marks the markers drawn over the data.
	b, data, marks strings.Builder
	class          string
	title          string
	xLabel, yLabel string
	legendItems    []string
	// h is the plot's height and left the room on its left for the y
	// axis, in px.
	h, left        float64
	x0, x1, y0, y1 float64
	logX, logY     bool
	// xTickLabel names an x tick (num by default).
	xTickLabel func(float64) string
	// yRows name the rows of horizontal bars (chartOpts.yRows).
	yRows []string
}

// Plot heights, in px: a chart, and the small overview of a whole range
// under a chart that shows part of it.
const (
	chartH    = 300.0
	overviewH = 80.0
	// nominalW is the plot width a minimum size in data units is computed
	// for (a histogram's lone bin): the plot is about this wide on a
	// laptop, wider on a desktop, narrower on a phone.
	nominalW = 640.0
	// ticksWanted is about how many x ticks a chart has; on a narrow
	// screen every other label is hidden (class minor, Style).
	ticksWanted = 10
)

func newChart(title, xLabel, yLabel string, x0, x1, y0, y1 float64, logY bool) *chart {
	return newChartOpts(chartOpts{title: title, xLabel: xLabel, yLabel: yLabel, x0: x0, x1: x1, y0: y0, y1: y1, logY: logY})
}

// chartOpts are a chart's axes and looks; the zero values give a chart of
// chartH with linear axes.
type chartOpts struct {
	title, xLabel, yLabel string
	x0, x1, y0, y1        float64
	logX, logY            bool
	// class is the svg's class: "chart" (the default) has a numbers
	// table beside it, "overview" shows again, small, what a chart beside
	// it shows.
	class      string
	height     float64
	left       float64
	xTickLabel func(float64) string
	// yRows, when given, names the rows of a chart of horizontal bars in
	// place of the y ticks: row i (0 at the top) spans y from n-i-1 to
	// n-i of y0 0 and y1 n.
	yRows []string
}

func newChartOpts(o chartOpts) *chart {
	c := &chart{class: o.class, title: o.title, xLabel: o.xLabel, yLabel: o.yLabel, h: o.height, left: o.left, logX: o.logX, logY: o.logY, xTickLabel: o.xTickLabel, yRows: o.yRows}
	if c.class == "" {
		c.class = "chart"
	}
	if c.h == 0 {
		c.h = chartH
	}
	if c.left == 0 {
		c.left = 64
	}
	if c.xTickLabel == nil {
		c.xTickLabel = num
	}
	x0, x1, y0, y1 := o.x0, o.x1, o.y0, o.y1
	if c.logX {
		x0 = math.Max(x0, 1e-9)
		if x1 <= x0 {
			x1 = x0 * 10
		}
	} else if x1 <= x0 {
		x1 = x0 + 1
	}
	if c.logY {
		y0 = math.Max(y0, 0.5)
		if y1 <= y0 {
			y1 = y0 * 10
		}
	} else if y1 <= y0 {
		y1 = y0 + 1
	}
	c.x0, c.x1, c.y0, c.y1 = x0, x1, y0, y1
	c.axes()
	return c
}

// fx is x's place across the plot, 0 at its left edge and 1 at its right.
func (c *chart) fx(x float64) float64 {
	if c.logX {
		x = math.Max(x, c.x0)
		return (math.Log10(x) - math.Log10(c.x0)) / (math.Log10(c.x1) - math.Log10(c.x0))
	}
	return (x - c.x0) / (c.x1 - c.x0)
}

// px is x as an SVG length: a percentage of the plot's width.
func (c *chart) px(x float64) string { return pc(c.fx(x)) }

func pc(f float64) string { return fmt.Sprintf("%.3f%%", f*100) }

// lineUnits is the width of the nested drawing's x axis (its viewBox):
// fx 1 is lineUnits.
const lineUnits = 10000.0

func (c *chart) py(y float64) float64 {
	if c.logY {
		y = math.Max(y, c.y0)
		return c.h - (math.Log10(y)-math.Log10(c.y0))/(math.Log10(c.y1)-math.Log10(c.y0))*c.h
	}
	return c.h - (y-c.y0)/(c.y1-c.y0)*c.h
}

// axes draws the frame, the ticks and their grid lines.
func (c *chart) axes() {
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="100%%" height="%g" fill="#fff" stroke="#444"/>`, c.h)
	var xt []float64
	if c.logX {
		xt = decades(c.x0, c.x1)
	} else {
		xt = niceTicks(c.x0, c.x1, ticksWanted)
	}
	for i, v := range xt {
		x := c.px(v)
		class := "tx"
		if i%2 == 1 && len(xt) > ticksWanted/2 {
			class = "tx minor"
		}
		fmt.Fprintf(&c.b, `<line x1="%s" y1="%g" x2="%s" y2="%g" stroke="#444"/><text x="%s" y="%g" class="%s">%s</text>`, x, c.h, x, c.h+4, x, c.h+16, class, esc(c.xTickLabel(v)))
	}
	if len(c.yRows) > 0 {
		n := float64(len(c.yRows))
		for i, name := range c.yRows {
			fmt.Fprintf(&c.b, `<text x="-6" y="%.1f" class="ty">%s</text>`, c.py(n-float64(i)-0.5)+4, esc(name))
		}
		return
	}
	var yt []float64
	if c.logY {
		yt = decades(c.y0, c.y1)
	} else {
		yt = niceTicks(c.y0, c.y1, max(2, int(c.h/50)))
	}
	for _, v := range yt {
		y := c.py(v)
		fmt.Fprintf(&c.b, `<line x1="0" y1="%.1f" x2="100%%" y2="%.1f" stroke="#ddd"/><text x="-6" y="%.1f" class="ty">%s</text>`, y, y, y+4, num(v))
	}
	if c.yLabel != "" {
		fmt.Fprintf(&c.b, `<text transform="translate(%g %g) rotate(-90)" class="yl">%s</text>`, 14-c.left, c.h/2, esc(c.yLabel))
	}
}

// decades are the powers of ten in [lo, hi].
func decades(lo, hi float64) []float64 {
	var out []float64
	for p := math.Floor(math.Log10(lo)); p <= math.Ceil(math.Log10(hi)); p++ {
		if v := math.Pow(10, p); v >= lo*(1-1e-9) && v <= hi*(1+1e-9) {
			out = append(out, v)
		}
	}
	return out
}

// niceTicks returns about n round values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	span := hi - lo
	if span <= 0 || math.IsNaN(span) || math.IsInf(span, 0) {
		return []float64{lo}
	}
	step := math.Pow(10, math.Floor(math.Log10(span/float64(n))))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m) <= float64(n) {
			step *= m
			break
		}
	}
	var out []float64
	for k := math.Ceil(lo / step); k*step <= hi+step*1e-9; k++ {
		out = append(out, k*step) // not a running sum: no drift
	}
	return out
}

// lines opens a drawing whose x axis is lineUnits wide and stretches to
// the plot's width, y in px: for the shapes whose points cannot be
// percentages.
func (c *chart) lines() {
	fmt.Fprintf(&c.data, `<svg x="0" y="0" width="100%%" height="%g" viewBox="0 0 %g %g" preserveAspectRatio="none">`, c.h, lineUnits, c.h)
}

func (c *chart) lx(x float64) float64 { return c.fx(x) * lineUnits }

func (c *chart) polyline(xs, ys []float64, color string, width float64) {
	if len(xs) == 0 {
		return
	}
	c.lines()
	fmt.Fprintf(&c.data, `<polyline fill="none" stroke="%s" stroke-width="%g" vector-effect="non-scaling-stroke" points="`, color, width)
	for i := range xs {
		fmt.Fprintf(&c.data, "%.1f,%.1f ", c.lx(xs[i]), c.py(ys[i]))
	}
	c.data.WriteString(`"/></svg>`)
}

// band fills between lo and hi along xs.
func (c *chart) band(xs, lo, hi []float64, color string) {
	if len(xs) == 0 {
		return
	}
	c.lines()
	fmt.Fprintf(&c.data, `<polygon fill="%s" fill-opacity="0.3" stroke="none" points="`, color)
	for i := range xs {
		fmt.Fprintf(&c.data, "%.1f,%.1f ", c.lx(xs[i]), c.py(hi[i]))
	}
	for i := len(xs) - 1; i >= 0; i-- {
		fmt.Fprintf(&c.data, "%.1f,%.1f ", c.lx(xs[i]), c.py(lo[i]))
	}
	c.data.WriteString(`"/></svg>`)
}

// dot marks a point; one above the plot is drawn as ▲ on its top edge
// (its title says the value), so that a rare far outlier does not squash
// the rest.
func (c *chart) dot(x, y, r float64, color, title string) {
	if x < c.x0 || x > c.x1 {
		return
	}
	if y > c.y1 {
		fmt.Fprintf(&c.data, `<text x="%s" y="9" class="off" fill="%s"><title>%s (above the plot)</title>▲</text>`, c.px(x), color, esc(title))
		return
	}
	fmt.Fprintf(&c.data, `<circle cx="%s" cy="%.1f" r="%g" fill="%s"><title>%s</title></circle>`, c.px(x), c.py(y), r, color, esc(title))
}

// rectXY fills data-space [x0,x1]×[y0,y1], at least 1 px wide (its
// outline).
func (c *chart) rectXY(x0, x1, y0, y1 float64, color string, opacity float64, title string) {
	x0, x1 = math.Max(x0, c.x0), math.Min(x1, c.x1)
	if x1 < x0 {
		return
	}
	Y0, Y1 := c.py(y1), c.py(y0)
	fmt.Fprintf(&c.data, `<rect x="%s" y="%.1f" width="%s" height="%.1f" fill="%s" fill-opacity="%g" stroke="%s" stroke-opacity="%g" stroke-width="0.5"><title>%s</title></rect>`,
		c.px(x0), Y0, pc(c.fx(x1)-c.fx(x0)), math.Max(Y1-Y0, 0), color, opacity, color, opacity, esc(title))
}

// vbar is a vertical bar dx px right of x, from y0 to y1, w px wide.
func (c *chart) vbar(x, dx, y0, y1, w float64, color string, opacity float64, title string) {
	if x < c.x0 || x > c.x1 {
		return
	}
	fmt.Fprintf(&c.data, `<line x1="%s" y1="%.1f" x2="%s" y2="%.1f" transform="translate(%g 0)" stroke="%s" stroke-opacity="%g" stroke-width="%g"><title>%s</title></line>`,
		c.px(x), c.py(y0), c.px(x), c.py(y1), dx, color, opacity, w, esc(title))
}

// vmark is a vertical marker line with a label at the top, drawn over
// the data.
func (c *chart) vmark(x float64, color, label string, row int) {
	if x < c.x0 || x > c.x1 {
		return
	}
	X := c.px(x)
	// A label in the right third reads leftwards, so that it stays inside
	// the plot however narrow.
	class, dx := "m", 4
	if c.fx(x) > 0.67 {
		class, dx = "m r", -4
	}
	fmt.Fprintf(&c.marks, `<line x1="%s" y1="0" x2="%s" y2="%g" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/><text x="%s" dx="%d" y="%g" class="%s" fill="%s">%s</text>`,
		X, X, c.h, color, X, dx, 13+float64(row)*14, class, color, esc(label))
}

// hmark is a horizontal marker line with a label at its right end.
func (c *chart) hmark(y float64, color, label string) {
	if y < c.y0 || y > c.y1 {
		return
	}
	Y := c.py(y)
	fmt.Fprintf(&c.marks, `<line x1="0" y1="%.1f" x2="100%%" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 3"/><text x="100%%" dx="-4" y="%.1f" class="m r" fill="%s">%s</text>`,
		Y, Y, color, Y-4, color, esc(label))
}

// window outlines data-space [x0, x1] over the whole height: on an
// overview, the part of the range the chart above it shows.
func (c *chart) window(x0, x1 float64, color, title string) {
	x0, x1 = math.Max(x0, c.x0), math.Min(x1, c.x1)
	fmt.Fprintf(&c.marks, `<rect class="win" x="%s" y="0" width="%s" height="%g" fill="%s" fill-opacity="0.12" stroke="%s" stroke-width="2"><title>%s</title></rect>`,
		c.px(x0), pc(c.fx(x1)-c.fx(x0)), c.h, color, color, esc(title))
}

// rowLabel writes label at the end x of a horizontal bar whose middle
// is at y: after it, or inside its end (white on the bar) when the bar
// reaches past the plot's middle, so that the text stays in the plot.
func (c *chart) rowLabel(x, y float64, label string) {
	if c.fx(x) > 0.5 {
		fmt.Fprintf(&c.marks, `<text x="%s" dx="-4" y="%.1f" class="ty" fill="#fff">%s</text>`, c.px(x), c.py(y)+4, esc(label))
		return
	}
	fmt.Fprintf(&c.marks, `<text x="%s" dx="4" y="%.1f" class="ty" style="text-anchor:start">%s</text>`, c.px(x), c.py(y)+4, esc(label))
}

// segmentLabel names the segment [x0, x1] of a horizontal bar ending at
// end, whose middle is at y: inside it when it is wide enough, else after
// the bar's end, or inside the bar's start when the bar is too long for
// that.
func (c *chart) segmentLabel(x0, x1, end, y float64, label string) {
	Y := c.py(y) + 4
	switch {
	case c.fx(x1)-c.fx(x0) > 0.18:
		fmt.Fprintf(&c.marks, `<text x="%s" y="%.1f" class="tx" fill="#fff">%s</text>`, pc((c.fx(x0)+c.fx(x1))/2), Y, esc(label))
	case c.fx(end) < 0.8:
		fmt.Fprintf(&c.marks, `<text x="%s" dx="4" y="%.1f" class="ty" style="text-anchor:start">%s</text>`, c.px(end), Y, esc(label))
	default:
		fmt.Fprintf(&c.marks, `<text x="%s" dx="4" y="%.1f" class="ty" style="text-anchor:start" fill="#fff">%s</text>`, c.px(c.x0), Y, esc(label))
	}
}

// legend lists colour keys (label, colour pairs) under the title.
func (c *chart) legend(items ...string) { c.legendItems = items }

func (c *chart) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, `<div class="plot %s" style="padding-left:%gpx">`, c.class, c.left)
	if c.title != "" {
		fmt.Fprintf(&b, `<div class="ct">%s</div>`, esc(c.title))
	}
	if len(c.legendItems) > 1 {
		b.WriteString(`<div class="lgd">`)
		for i := 0; i+1 < len(c.legendItems); i += 2 {
			fmt.Fprintf(&b, `<span><i style="background:%s"></i>%s</span>`, c.legendItems[i+1], esc(c.legendItems[i]))
		}
		b.WriteString(`</div>`)
	}
	// The svg's height leaves room for the x ticks' labels under the plot.
	fmt.Fprintf(&b, `<svg class="%s" width="100%%" height="%g" role="img" aria-label="%s">`, c.class, c.h+20, esc(c.title))
	b.WriteString(c.b.String())
	b.WriteString(`<g class="data">` + c.data.String() + "</g>")
	b.WriteString(c.marks.String())
	b.WriteString("</svg>")
	if c.xLabel != "" {
		fmt.Fprintf(&b, `<div class="xlab">%s</div>`, esc(c.xLabel))
	}
	b.WriteString("</div>")
	return b.String()
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// num prints an axis value without needless digits.
func num(v float64) string {
	if math.Abs(v) >= 1e7 {
		return fmt.Sprintf("%.0e", v)
	}
	s := fmt.Sprintf("%.4f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}
