package experiment

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"os"
	"strings"
)

// WriteHTMLFile writes the HTML report: the stage table, the findings and
// inline SVG charts (no script, no network), so it opens from a CI
// artifact as it is.
func WriteHTMLFile(path string, r *Report) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the HTML report: %w", err)
	}
	if err := WriteHTML(f, r); err != nil {
		f.Close()
		return fmt.Errorf("writing the HTML report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the HTML report %s: %w", path, err)
	}
	return nil
}

type xy struct{ x, y float64 }

type line struct {
	name, color string
	pts         []xy
}

// chart draws lines on one plot; marks are x positions drawn as dashed
// verticals (a gauge leaving rest, a latency line crossed).
func chart(title, xlabel, ylabel string, lines []line, marks []float64) template.HTML {
	const w, h, l, r, t, bm = 460.0, 220.0, 56.0, 12.0, 26.0, 36.0
	xmin, xmax, ymax := math.Inf(1), math.Inf(-1), 0.0
	for _, ln := range lines {
		for _, p := range ln.pts {
			xmin, xmax, ymax = math.Min(xmin, p.x), math.Max(xmax, p.x), math.Max(ymax, p.y)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" role="img"><title>%s</title>`, w, h, w, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="%g" y="16" font-size="13" font-weight="bold">%s</text>`, l, html.EscapeString(title))
	if math.IsInf(xmin, 0) {
		b.WriteString(`<text x="60" y="110" font-size="12">no data</text></svg>`)
		return template.HTML(b.String())
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	if ymax <= 0 {
		ymax = 1
	}
	ymax *= 1.1
	px := func(x float64) float64 { return l + (x-xmin)/(xmax-xmin)*(w-l-r) }
	py := func(y float64) float64 { return h - bm - y/ymax*(h-t-bm) }
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#444"/>`, l, h-bm, w-r, h-bm)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#444"/>`, l, t, l, h-bm)
	for i := 0; i <= 4; i++ {
		y := ymax * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" font-size="10" text-anchor="end">%s</text>`, l-4, py(y)+3, short(y))
		x := xmin + (xmax-xmin)*float64(i)/4
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" font-size="10" text-anchor="middle">%s</text>`, px(x), h-bm+13, short(x))
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" font-size="11" text-anchor="middle">%s</text>`, (l+w-r)/2, h-6, html.EscapeString(xlabel))
	fmt.Fprintf(&b, `<text x="12" y="%g" font-size="11" transform="rotate(-90 12 %g)" text-anchor="middle">%s</text>`, (t+h-bm)/2, (t+h-bm)/2, html.EscapeString(ylabel))
	for _, m := range marks {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%g" x2="%.1f" y2="%g" stroke="#c00" stroke-dasharray="4 3"/>`, px(m), t, px(m), h-bm)
	}
	for i, ln := range lines {
		var pts []string
		for _, p := range ln.pts {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.x), py(p.y)))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, ln.color, strings.Join(pts, " "))
		for _, p := range pts {
			if len(ln.pts) <= 40 {
				xy := strings.Split(p, ",")
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2.5" fill="%s"/>`, xy[0], xy[1], ln.color)
			}
		}
		fmt.Fprintf(&b, `<text x="%g" y="%d" font-size="11" fill="%s" text-anchor="end">%s</text>`, w-r, 16+12*i, ln.color, html.EscapeString(ln.name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func short(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case a >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 1:
		return fmt.Sprintf("%.1f", v)
	case a == 0:
		return "0"
	default:
		return fmt.Sprintf("%.2g", v)
	}
}

type htmlPage struct {
	R        *Report
	P        string
	Rule     string
	Summary  string
	Charts   []template.HTML
	Gauges   []template.HTML
	Stages   []htmlStage
	Controls []htmlStage
}

type htmlStage struct {
	Name, Offered, Sent, Served, Success, Latency, Server, Diff, Hit, Flags string
	Knee, Bad                                                               bool
}

func htmlStages(st Settings, stages []Stage, k *Knee) []htmlStage {
	var out []htmlStage
	for i, s := range stages {
		d := s.Derived
		h := htmlStage{Name: s.Name, Offered: "-", Sent: fmt.Sprintf("%.1f", d.SendRate), Served: fmt.Sprintf("%.1f", d.Throughput),
			Success: fmt.Sprintf("%.2f %%", 100*d.Success), Latency: fmt.Sprintf("%.1f ms", d.LatencyMS), Server: "-", Diff: "-", Hit: "-",
			Flags: strings.Join(d.Flags, "; "), Knee: k != nil && k.Stage == i, Bad: !d.Counts}
		if s.Offered > 0 {
			h.Offered = fmt.Sprintf("%.1f", s.Offered)
		}
		if d.ServerMS > 0 {
			h.Server, h.Diff = fmt.Sprintf("%.1f ms", d.ServerMS), fmt.Sprintf("%+.1f ms", d.DiffMS)
		}
		if d.HitRatio != nil {
			h.Hit = fmt.Sprintf("%.0f %%", 100**d.HitRatio)
		}
		if d.Objective == "misses" {
			h.Flags = strings.TrimPrefix(h.Flags+"; over the objective", "; ")
		}
		out = append(out, h)
	}
	return out
}

// WriteHTML writes the HTML report.
func WriteHTML(w io.Writer, r *Report) error {
	var sum strings.Builder
	if err := WriteSummary(&sum, r); err != nil {
		return err
	}
	pg := htmlPage{R: r, P: fmt.Sprintf("p%g", r.Settings.Percentile), Rule: KneeRule, Summary: sum.String(),
		Stages: htmlStages(r.Settings, r.Stages, r.Knee)}
	if r.Control != nil {
		pg.Controls = htmlStages(r.Settings, r.Control.Stages, r.Control.Knee)
	}
	// The stages: served rate and latency against the load level.
	var tput, lat, ctput, clat []xy
	// Against the level up a ramp; by the stage's start when the levels
	// go up and down (a plateau, a spike and a recovery share levels).
	level := map[string]string{"closed": "concurrency", "open": "offered arrivals/s", "population": "users", "clients": "clients"}[r.Model]
	rising := true
	for i := 1; i < len(r.Stages); i++ {
		rising = rising && r.Stages[i].Level > r.Stages[i-1].Level
	}
	x := func(s Stage) float64 { return s.Level }
	if !rising {
		level, x = "stage start (seconds)", func(s Stage) float64 { return s.StartS }
	}
	for _, s := range r.Stages {
		tput, lat = append(tput, xy{x(s), s.Derived.Throughput}), append(lat, xy{x(s), s.Derived.LatencyMS})
	}
	tl := []line{{"main", "#1f5fbf", tput}}
	ll := []line{{"main", "#b8461b", lat}}
	if r.Control != nil {
		for _, s := range r.Control.Stages {
			ctput, clat = append(ctput, xy{x(s), s.Derived.Throughput}), append(clat, xy{x(s), s.Derived.LatencyMS})
		}
		tl = append(tl, line{"control " + r.Control.Group, "#6a9f3a", ctput})
		ll = append(ll, line{"control " + r.Control.Group, "#6a9f3a", clat})
	}
	var kneeMark []float64
	if r.Knee != nil && r.Knee.Stage < len(r.Stages) {
		kneeMark = []float64{x(r.Stages[r.Knee.Stage])}
	}
	pg.Charts = append(pg.Charts,
		chart("served per second, by stage", level, "answers/s", tl, kneeMark),
		chart(pg.P+" latency, by stage", level, "ms", ll, kneeMark))
	// The run second by second, with the moment the first resource ran out marked.
	var done, p95, srv []xy
	for _, p := range r.Series {
		done, p95 = append(done, xy{p.AtS, float64(p.Done)}), append(p95, xy{p.AtS, p.P95MS})
		if p.ServerP95MS > 0 {
			srv = append(srv, xy{p.AtS, p.ServerP95MS})
		}
	}
	var moved []float64
	if r.RanOut != nil {
		moved = append(moved, r.RanOut.AtS)
	}
	lines := []line{{"client p95", "#b8461b", p95}}
	if len(srv) > 0 {
		lines = append(lines, line{"server p95", "#7a3fb0", srv})
	}
	pg.Charts = append(pg.Charts,
		chart("finished per second", "seconds", "requests", []line{{"finished", "#1f5fbf", done}}, moved),
		chart("p95 each second", "seconds", "ms", lines, moved))
	for i, g := range r.Gauges {
		if i == 12 {
			break
		}
		var pts []xy
		for _, s := range g.Samples {
			pts = append(pts, xy{s.AtS, s.Value})
		}
		var mk []float64
		if g.MovedAtS != nil {
			mk = []float64{*g.MovedAtS}
		}
		unit := "value"
		switch g.Kind {
		case "rate":
			unit = "per second"
		case "quantile":
			unit = "quantile"
		}
		pg.Gauges = append(pg.Gauges, chart(g.Name, "seconds", unit, []line{{"", "#333", pts}}, mk))
	}
	return pageTmpl.Execute(w, pg)
}

var pageTmpl = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>perfgate experiment: {{.R.Model}} against {{.R.Target}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}
th{background:#f3f3f3}td.l{text-align:left}tr.knee td{background:#fff3c4}tr.bad td{color:#a00}
.charts{display:flex;flex-wrap:wrap;gap:12px}.verdict{font-size:18px;font-weight:bold}
pre{background:#f7f7f7;padding:8px;font-size:12px;overflow-x:auto}
</style></head><body>
<h1>perfgate experiment: {{.R.Model}} against {{.R.Target}}</h1>
<p class="verdict">{{.R.Verdict}} (exit {{.R.Exit}})</p>
{{with .R.Knee}}<p><b>Knee:</b> {{.Name}}, {{printf "%.1f" .Throughput}} answers/s ({{.Why}}). <i>Attributed to the {{.Attribution}}.</i></p>{{end}}
<p><small>Rule: {{.Rule}}.</small></p>
{{with .R.RanOut}}<p><b>First resource to run out:</b> {{.Text}}</p>{{end}}
{{with .R.Population}}<p><b>Population:</b> {{.Verdict}}</p>{{with .Retry}}<p>{{.}}</p>{{end}}{{end}}
{{with .R.Clients}}{{with .Abort}}<p><b>Aborted:</b> {{.Text}}</p>{{end}}{{end}}
{{range .R.Phases}}<p>{{.Text}}</p>{{end}}
{{range .R.Warnings}}<p style="color:#a00"><b>Warning:</b> {{.}}</p>{{end}}
<h2>Stages</h2>
<table><tr><th>stage</th><th>offered/s</th><th>sent/s</th><th>served/s</th><th>success</th><th>{{.P}}</th><th>server {{.P}}</th><th>client − server</th><th>hit ratio</th><th>flags</th></tr>
{{range .Stages}}<tr class="{{if .Knee}}knee{{end}} {{if .Bad}}bad{{end}}"><td class="l">{{.Name}}</td><td>{{.Offered}}</td><td>{{.Sent}}</td><td>{{.Served}}</td><td>{{.Success}}</td><td>{{.Latency}}</td><td>{{.Server}}</td><td>{{.Diff}}</td><td>{{.Hit}}</td><td class="l">{{.Flags}}</td></tr>
{{end}}</table>
{{if .Controls}}<h2>Control ramp (group {{.R.Control.Group}})</h2>
<table><tr><th>stage</th><th>offered/s</th><th>sent/s</th><th>served/s</th><th>success</th><th>{{.P}}</th><th>server {{.P}}</th><th>client − server</th><th>hit ratio</th><th>flags</th></tr>
{{range .Controls}}<tr class="{{if .Knee}}knee{{end}} {{if .Bad}}bad{{end}}"><td class="l">{{.Name}}</td><td>{{.Offered}}</td><td>{{.Sent}}</td><td>{{.Served}}</td><td>{{.Success}}</td><td>{{.Latency}}</td><td>{{.Server}}</td><td>{{.Diff}}</td><td>{{.Hit}}</td><td class="l">{{.Flags}}</td></tr>
{{end}}</table><p>{{.R.Control.Note}}</p>{{end}}
{{if .R.Little}}<h2>Little's law</h2><table><tr><th>stage</th><th>users</th><th>throughput/s</th><th>mean latency</th><th>think</th><th>throughput × (latency + think)</th></tr>
{{range .R.Little}}<tr><td class="l">{{.Stage}}</td><td>{{.Users}}</td><td>{{printf "%.1f" .Throughput}}</td><td>{{printf "%.4f" .LatencyS}} s</td><td>{{.ThinkS}} s</td><td>{{printf "%.1f" .Implied}}</td></tr>{{end}}</table>{{end}}
<h2>Charts</h2><div class="charts">{{range .Charts}}{{.}}{{end}}</div>
{{if .Gauges}}<h2>Gauges</h2><div class="charts">{{range .Gauges}}{{.}}{{end}}</div>{{end}}
<h2>Summary</h2><pre>{{.Summary}}</pre>
</body></html>
`))
