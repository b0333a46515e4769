package experiment

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
)

// SideBySideKind names the JSON of several runs set side by side.
const SideBySideKind = "perfgate.experiment.side-by-side"

// SideBySide is repeats of one experiment read together (`perfgate
// experiment --repeat N`, `perfgate merge --side-by-side`): one table per
// figure with a column per run, and how far the knee moved between runs.
// One run's knee is one draw of a noisy measurement; the spread says how
// much of a change between two scheduled runs is only that noise.
type SideBySide struct {
	Kind     string      `json:"kind"`
	Version  int         `json:"version"`
	Model    string      `json:"model"`
	Target   string      `json:"target"`
	Runs     []string    `json:"runs"`   // a label per run: its file, or "run i"
	Stages   []string    `json:"stages"` // the stage names, the same in every run
	Figures  []RunFigure `json:"figures"`
	Knee     KneeSpread  `json:"knee"`
	Routine  []Routine   `json:"routine"` // each run's routine numbers
	Verdicts []string    `json:"verdicts"`
	Exit     int         `json:"exit"` // the worst run's
}

// RunFigure is one figure, stage by stage (rows) and run by run (columns).
type RunFigure struct {
	Name   string      `json:"name"`
	Unit   string      `json:"unit"`
	Values [][]float64 `json:"values"` // [stage][run]
}

// KneeSpread is the knee of each run and how far apart they lie.
type KneeSpread struct {
	PerRun    []*float64 `json:"per_run_per_s"` // nil where a run found none
	Min       *float64   `json:"min_per_s,omitempty"`
	Median    *float64   `json:"median_per_s,omitempty"`
	Max       *float64   `json:"max_per_s,omitempty"`
	SpreadPct *float64   `json:"spread_pct,omitempty"` // (max - min) / median
	Levels    []*float64 `json:"levels"`
	Text      string     `json:"text"`
}

// SideBySideOf sets runs of one experiment beside each other; they must be
// the same model over the same stages.
func SideBySideOf(reps []*Report, labels []string) (*SideBySide, error) {
	if len(reps) < 2 {
		return nil, fmt.Errorf("setting runs side by side: %d given, write two or more", len(reps))
	}
	first := reps[0]
	sb := &SideBySide{Kind: SideBySideKind, Version: Version, Model: first.Model, Target: first.Target, Runs: labels}
	for _, s := range first.Stages {
		sb.Stages = append(sb.Stages, s.Name)
	}
	for i, r := range reps {
		if r.Model != first.Model || len(r.Stages) != len(first.Stages) {
			return nil, fmt.Errorf("setting runs side by side: %s is a %s experiment of %d stages, %s a %s one of %d; repeats must run the same plan",
				labels[i], r.Model, len(r.Stages), labels[0], first.Model, len(first.Stages))
		}
		for si, s := range r.Stages {
			if s.Name != first.Stages[si].Name {
				return nil, fmt.Errorf("setting runs side by side: stage %d is %s in %s and %s in %s; repeats must run the same plan", si+1, s.Name, labels[i], first.Stages[si].Name, labels[0])
			}
		}
	}
	p := fmt.Sprintf("p%g", first.Settings.Percentile)
	figs := []struct {
		name, unit string
		get        func(StageFigures) float64
	}{
		{"served per second", "answers/s", func(d StageFigures) float64 { return d.Throughput }},
		{p + " latency", "ms", func(d StageFigures) float64 { return d.LatencyMS }},
		{"success", "%", func(d StageFigures) float64 { return 100 * d.Success }},
	}
	for _, f := range figs {
		rf := RunFigure{Name: f.name, Unit: f.unit}
		for si := range first.Stages {
			row := make([]float64, len(reps))
			for ri, r := range reps {
				row[ri] = f.get(r.Stages[si].Derived)
			}
			rf.Values = append(rf.Values, row)
		}
		sb.Figures = append(sb.Figures, rf)
	}
	var knees []float64
	for _, r := range reps {
		sb.Routine = append(sb.Routine, r.Routine)
		sb.Verdicts = append(sb.Verdicts, r.Verdict)
		sb.Exit = max(sb.Exit, r.Exit)
		k := r.Routine.Knee
		sb.Knee.PerRun, sb.Knee.Levels = append(sb.Knee.PerRun, k), append(sb.Knee.Levels, r.Routine.KneeLevel)
		if k != nil {
			knees = append(knees, *k)
		}
	}
	sb.Knee.Text = kneeSpread(&sb.Knee, knees, len(reps))
	return sb, nil
}

func kneeSpread(k *KneeSpread, knees []float64, runs int) string {
	if len(knees) == 0 {
		return fmt.Sprintf("no run of %d found a knee", runs)
	}
	slices.Sort(knees)
	lo, hi := knees[0], knees[len(knees)-1]
	med := knees[len(knees)/2]
	if len(knees)%2 == 0 {
		med = (knees[len(knees)/2-1] + knees[len(knees)/2]) / 2
	}
	k.Min, k.Max, k.Median = &lo, &hi, &med
	text := fmt.Sprintf("the knee over %d runs: median %.1f/s, from %.1f to %.1f/s", len(knees), med, lo, hi)
	if med > 0 {
		sp := 100 * (hi - lo) / med
		k.SpreadPct = &sp
		text += fmt.Sprintf(", a spread of %.1f %% of the median", sp)
	}
	if len(knees) < runs {
		text += fmt.Sprintf("; %d of %d runs found none", runs-len(knees), runs)
	}
	return text
}

// WriteSideBySide writes the runs as text: a table per figure, the
// routine numbers run by run, and the knee's spread.
func WriteSideBySide(w io.Writer, sb *SideBySide) error {
	var b strings.Builder
	fmt.Fprintf(&b, "perfgate experiment: %d runs of the %s model against %s, side by side\n", len(sb.Runs), sb.Model, sb.Target)
	for _, f := range sb.Figures {
		fmt.Fprintf(&b, "%s (%s):\n", f.Name, f.Unit)
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "stage\t%s\t\n", strings.Join(sb.Runs, "\t"))
		for si, row := range f.Values {
			cells := make([]string, len(row))
			for i, v := range row {
				cells[i] = fmt.Sprintf("%.1f", v)
			}
			fmt.Fprintf(tw, "%s\t%s\t\n", sb.Stages[si], strings.Join(cells, "\t"))
		}
		tw.Flush()
	}
	b.WriteString("routine numbers:\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "run\tknee/s\tknee level\tfirst resource to run out\tplateau growth ms/min\trecovery s\tverdict\t")
	for i, r := range sb.Routine {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", sb.Runs[i], num(r.Knee), num(r.KneeLevel), orNone(r.FirstResource), num(r.PlateauGrowth), num(r.RecoveryS), sb.Verdicts[i])
	}
	tw.Flush()
	fmt.Fprintf(&b, "%s\n", sb.Knee.Text)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteFile writes the side-by-side as indented JSON.
func (sb *SideBySide) WriteFile(path string) error {
	data, err := json.MarshalIndent(sb, "", "  ")
	if err != nil {
		return fmt.Errorf("writing the side-by-side report %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the side-by-side report: %w", err)
	}
	return nil
}

// runColors tell the runs apart on a chart; past the last they repeat.
var runColors = []string{"#1f5fbf", "#b8461b", "#6a9f3a", "#7a3fb0", "#c08a00", "#2a8f8f", "#555555", "#c0306a"}

// WriteSideBySideHTML writes the runs as one page: a chart per figure
// with a line per run over the stages, its table, and the knee's spread.
func WriteSideBySideHTML(w io.Writer, sb *SideBySide) error {
	var text strings.Builder
	if err := WriteSideBySide(&text, sb); err != nil {
		return err
	}
	pg := struct {
		SB      *SideBySide
		Charts  []template.HTML
		Summary string
	}{SB: sb, Summary: text.String()}
	for _, f := range sb.Figures {
		var lines []line
		for ri, run := range sb.Runs {
			var pts []xy
			for si, row := range f.Values {
				pts = append(pts, xy{float64(si + 1), row[ri]})
			}
			lines = append(lines, line{run, runColors[ri%len(runColors)], pts})
		}
		pg.Charts = append(pg.Charts, chart(f.Name+", by stage, run by run", "stage", f.Unit, lines, nil))
	}
	var knee []xy
	for ri, k := range sb.Knee.PerRun {
		if k != nil {
			knee = append(knee, xy{float64(ri + 1), *k})
		}
	}
	pg.Charts = append(pg.Charts, chart("the knee, run by run", "run", "answers/s", []line{{"knee", "#b8461b", knee}}, nil))
	return sideTmpl.Execute(w, pg)
}

// WriteSideBySideHTMLFile writes WriteSideBySideHTML's page to a file.
func WriteSideBySideHTMLFile(path string, sb *SideBySide) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the side-by-side HTML report: %w", err)
	}
	if err := WriteSideBySideHTML(f, sb); err != nil {
		f.Close()
		return fmt.Errorf("writing the side-by-side HTML report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the side-by-side HTML report %s: %w", path, err)
	}
	return nil
}

// cell formats a table value for the page.
func cell(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

var sideTmpl = template.Must(template.New("side").Funcs(template.FuncMap{"cell": cell, "stage": func(sb *SideBySide, i int) string { return sb.Stages[i] }}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>perfgate experiment: {{len .SB.Runs}} runs against {{.SB.Target}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;padding:3px 8px;font-size:13px;text-align:right}
th{background:#f3f3f3}td.l{text-align:left}.charts{display:flex;flex-wrap:wrap;gap:12px}
pre{background:#f7f7f7;padding:8px;font-size:12px;overflow-x:auto}
</style></head><body>
<h1>perfgate experiment: {{len .SB.Runs}} runs of the {{.SB.Model}} model against {{.SB.Target}}</h1>
<p><b>Knee:</b> {{.SB.Knee.Text}}</p>
<h2>Charts</h2><div class="charts">{{range .Charts}}{{.}}{{end}}</div>
{{range .SB.Figures}}<h2>{{.Name}} ({{.Unit}})</h2>
<table><tr><th>stage</th>{{range $.SB.Runs}}<th>{{.}}</th>{{end}}</tr>
{{range $i, $row := .Values}}<tr><td class="l">{{stage $.SB $i}}</td>{{range $row}}<td>{{cell .}}</td>{{end}}</tr>
{{end}}</table>
{{end}}<h2>Summary</h2><pre>{{.Summary}}</pre>
</body></html>
`))
