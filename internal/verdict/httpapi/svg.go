package httpapi

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/verdict"
)

// The chart's size in SVG units.
const (
	chartW   = 320.0
	chartH   = 110.0
	chartPad = 12.0
)

// trendSVG draws one metric's head/base ratio over runs as an inline SVG:
// a polyline of the ratios, a dashed line at 1, red dots for failed runs.
// Every value is a number this function formats, so the markup it returns
// is safe to embed.
func trendSVG(t verdict.Trend) template.HTML {
	lo, hi := 0.9, 1.1
	for _, p := range t.Points {
		if !math.IsNaN(p.Ratio) && !math.IsInf(p.Ratio, 0) {
			lo, hi = math.Min(lo, p.Ratio), math.Max(hi, p.Ratio)
		}
	}
	span := hi - lo
	y := func(r float64) float64 {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			r = 1
		}
		return chartPad + (hi-r)/span*(chartH-2*chartPad)
	}
	x := func(i int) float64 {
		if len(t.Points) == 1 {
			return chartW / 2
		}
		return chartPad + float64(i)*(chartW-2*chartPad)/float64(len(t.Points)-1)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="trend-svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="head/base ratio over %d runs">`,
		chartW, chartH, chartW, chartH, len(t.Points))
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#f6f8fa"/>`, chartW, chartH)
	fmt.Fprintf(&b, `<line x1="0" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#8c959f" stroke-dasharray="4 3"/>`, chartW, y(1), y(1))
	fmt.Fprintf(&b, `<text x="2" y="10" font-size="9" fill="#57606a">x%.2f</text><text x="2" y="%.0f" font-size="9" fill="#57606a">x%.2f</text>`, hi, chartH-2, lo)
	var pts []string
	for i, p := range t.Points {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(p.Ratio)))
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#0969da" stroke-width="1.5" points="%s"/>`, strings.Join(pts, " "))
	for i, p := range t.Points {
		color := "#0969da"
		if p.Fail {
			color = "#cf222e"
		}
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>run %d (%s): x%.3f</title></circle>`, x(i), y(p.Ratio), color, p.RunID, event.ShortSHA(p.HeadSHA), p.Ratio)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
