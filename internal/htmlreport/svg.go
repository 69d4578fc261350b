package htmlreport

import (
	"fmt"
	"math"
	"strings"
)

// chart is one SVG drawing: a plot area with linear or log axes. Its
// coordinates are computed here so that the file needs no script and no
// font of its own (text uses the reader's sans-serif).
type chart struct {
	// b holds the frame, axes, markers and legend; data the data drawn,
	// in a group of its own (class "data": the browser test checks it).
	b, data        strings.Builder
	w, h           float64
	left, right    float64
	top, bottom    float64
	x0, x1, y0, y1 float64
	logY           bool
}

// Chart sizes: the drawing scales to its box (viewBox) in the page.
const (
	chartW = 720.0
	chartH = 360.0
)

func newChart(title, xLabel, yLabel string, x0, x1, y0, y1 float64, logY bool) *chart {
	c := &chart{w: chartW, h: chartH, left: 72, right: 16, top: 44, bottom: 52, logY: logY}
	if x1 <= x0 {
		x1 = x0 + 1
	}
	if logY {
		y0 = math.Max(y0, 0.5)
		if y1 <= y0 {
			y1 = y0 * 10
		}
	} else if y1 <= y0 {
		y1 = y0 + 1
	}
	c.x0, c.x1, c.y0, c.y1 = x0, x1, y0, y1
	fmt.Fprintf(&c.b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, c.w, c.h, esc(title))
	fmt.Fprintf(&c.b, `<rect x="0" y="0" width="%g" height="%g" fill="#fff"/>`, c.w, c.h)
	fmt.Fprintf(&c.b, `<text x="%g" y="18" class="t">%s</text>`, c.left, esc(title))
	c.axes(xLabel, yLabel)
	return c
}

func (c *chart) px(x float64) float64 {
	return c.left + (x-c.x0)/(c.x1-c.x0)*(c.w-c.left-c.right)
}

func (c *chart) py(y float64) float64 {
	span := c.h - c.top - c.bottom
	if c.logY {
		y = math.Max(y, c.y0)
		return c.h - c.bottom - (math.Log10(y)-math.Log10(c.y0))/(math.Log10(c.y1)-math.Log10(c.y0))*span
	}
	return c.h - c.bottom - (y-c.y0)/(c.y1-c.y0)*span
}

// axes draws the frame, ticks and the axis labels (with their units).
func (c *chart) axes(xLabel, yLabel string) {
	l, r, t, b := c.left, c.w-c.right, c.top, c.h-c.bottom
	fmt.Fprintf(&c.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#444"/>`, l, t, r-l, b-t)
	for _, v := range niceTicks(c.x0, c.x1, 8) {
		x := c.px(v)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#444"/><text x="%.1f" y="%.1f" class="tx">%s</text>`, x, b, x, b+4, x, b+16, num(v))
	}
	var yt []float64
	if c.logY {
		for p := math.Floor(math.Log10(c.y0)); p <= math.Ceil(math.Log10(c.y1)); p++ {
			if v := math.Pow(10, p); v >= c.y0 && v <= c.y1 {
				yt = append(yt, v)
			}
		}
	} else {
		yt = niceTicks(c.y0, c.y1, 6)
	}
	for _, v := range yt {
		y := c.py(v)
		fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" class="ty">%s</text>`, l, y, r, y, l-6, y+4, num(v))
	}
	fmt.Fprintf(&c.b, `<text x="%.1f" y="%.1f" class="xl">%s</text>`, (l+r)/2, c.h-10, esc(xLabel))
	fmt.Fprintf(&c.b, `<text transform="translate(16 %.1f) rotate(-90)" class="xl">%s</text>`, (t+b)/2, esc(yLabel))
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

func (c *chart) polyline(xs, ys []float64, color string, width float64) {
	if len(xs) == 0 {
		return
	}
	fmt.Fprintf(&c.data, `<polyline fill="none" stroke="%s" stroke-width="%g" points="`, color, width)
	for i := range xs {
		fmt.Fprintf(&c.data, "%.1f,%.1f ", c.px(xs[i]), c.py(ys[i]))
	}
	c.data.WriteString(`"/>`)
}

// band fills between lo and hi along xs.
func (c *chart) band(xs, lo, hi []float64, color string) {
	if len(xs) == 0 {
		return
	}
	fmt.Fprintf(&c.data, `<polygon fill="%s" fill-opacity="0.3" stroke="none" points="`, color)
	for i := range xs {
		fmt.Fprintf(&c.data, "%.1f,%.1f ", c.px(xs[i]), c.py(hi[i]))
	}
	for i := len(xs) - 1; i >= 0; i-- {
		fmt.Fprintf(&c.data, "%.1f,%.1f ", c.px(xs[i]), c.py(lo[i]))
	}
	c.data.WriteString(`"/>`)
}

func (c *chart) dot(x, y, r float64, color, title string) {
	fmt.Fprintf(&c.data, `<circle cx="%.1f" cy="%.1f" r="%g" fill="%s"><title>%s</title></circle>`, c.px(x), c.py(y), r, color, esc(title))
}

// rectXY fills data-space [x0,x1]×[y0,y1].
func (c *chart) rectXY(x0, x1, y0, y1 float64, color string, opacity float64, title string) {
	X0, X1, Y0, Y1 := c.px(x0), c.px(x1), c.py(y1), c.py(y0)
	fmt.Fprintf(&c.data, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s" fill-opacity="%g"><title>%s</title></rect>`,
		X0, Y0, math.Max(X1-X0, 0.8), math.Max(Y1-Y0, 0), color, opacity, esc(title))
}

// vmark is a vertical marker line with a label at the top.
func (c *chart) vmark(x float64, color, label string, row int) {
	if x < c.x0 || x > c.x1 {
		return
	}
	X := c.px(x)
	fmt.Fprintf(&c.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2" stroke-dasharray="6 3"/><text x="%.1f" y="%.1f" class="m" fill="%s">%s</text>`,
		X, c.top, X, c.h-c.bottom, color, X+3, c.top+12+float64(row)*13, color, esc(label))
}

// legend lists colour keys under the title.
func (c *chart) legend(items ...string) {
	x := c.w - c.right - 8
	for i := len(items) - 2; i >= 0; i -= 2 {
		label, color := items[i], items[i+1]
		x -= 7*float64(len(label)) + 22
		fmt.Fprintf(&c.b, `<rect x="%.1f" y="26" width="12" height="12" fill="%s"/><text x="%.1f" y="36" class="lg">%s</text>`, x, color, x+16, esc(label))
	}
}

func (c *chart) String() string {
	return c.b.String() + `<g class="data">` + c.data.String() + "</g></svg>"
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// num prints an axis value without needless digits.
func num(v float64) string {
	if math.Abs(v) >= 1e5 {
		return fmt.Sprintf("%.0e", v)
	}
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}
