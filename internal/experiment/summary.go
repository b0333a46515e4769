package experiment

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteSummary writes the report as text: a line per stage, then what the
// experiment found.
func WriteSummary(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "perfgate experiment: %s model against %s", r.Model, r.Target)
	if r.Shard != "" {
		fmt.Fprintf(&b, " (shard %s)", r.Shard)
	}
	if r.Shards > 1 {
		fmt.Fprintf(&b, " (%d shards merged)", r.Shards)
	}
	b.WriteString("\n")
	stageTable(&b, r.Settings, r.Stages)
	if r.Knee != nil {
		fmt.Fprintf(&b, "knee: %s, %.1f answers/s at p%g %.1f ms (%s). Rule: %s.\n", r.Knee.Name, r.Knee.Throughput, r.Settings.Percentile, r.Knee.LatencyMS, r.Knee.Why, KneeRule)
	}
	if c := r.Control; c != nil {
		fmt.Fprintf(&b, "control ramp (group %q):\n", c.Group)
		stageTable(&b, r.Settings, c.Stages)
		if c.Note != "" {
			fmt.Fprintf(&b, "control: %s\n", c.Note)
		}
	}
	if len(r.Little) > 0 {
		b.WriteString("Little's law: users = throughput x (latency + think time)\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "stage\tusers\tthroughput/s\tmean latency\tthink\timplied users\t")
		for _, l := range r.Little {
			fmt.Fprintf(tw, "%s\t%g\t%.1f\t%.1fms\t%gs\t%.1f\t\n", l.Stage, l.Users, l.Throughput, 1e3*l.LatencyS, l.ThinkS, l.Implied)
		}
		tw.Flush()
	}
	if p := r.Population; p != nil {
		fmt.Fprintf(&b, "population: offered %.1f/s (users / think), achieved %.1f/s over %.1f think times; %s\n", p.Offered, p.Achieved, p.ThinkTimes, p.Verdict)
		if p.Retry != "" {
			b.WriteString(p.Retry + "\n")
		}
	}
	if c := r.Clients; c != nil && c.Abort != nil {
		fmt.Fprintf(&b, "aborted: %s\n", c.Abort.Text)
	}
	if m := r.RanOut; m != nil {
		fmt.Fprintf(&b, "first resource to run out: %s\n", m.Text)
	}
	for _, p := range r.Phases {
		b.WriteString(p.Text + "\n")
	}
	for _, t := range r.Thresholds {
		mark := "ok"
		if t.Fail {
			mark = "FAIL"
		}
		fmt.Fprintf(&b, "%s %s\n", t.Says, mark)
	}
	if c := r.Previous; c != nil {
		for _, l := range c.Lines {
			fmt.Fprintf(&b, "previous (%s): %s\n", c.File, l)
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	for _, n := range r.Warnings {
		fmt.Fprintf(&b, "WARNING: %s\n", n)
	}
	fmt.Fprintf(&b, "verdict: %s (exit %d)\n", r.Verdict, r.Exit)
	_, err := io.WriteString(w, b.String())
	return err
}

func stageTable(b *strings.Builder, st Settings, stages []Stage) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	p := fmt.Sprintf("p%g", st.Percentile)
	fmt.Fprintf(tw, "stage\toffered/s\tsent/s\tserved/s\tsuccess\t%s\tserver %s\tclient-server\thit ratio\tflags\t\n", p, p)
	for _, s := range stages {
		d := s.Derived
		offered, server, diff, hit := "-", "-", "-", "-"
		if s.Offered > 0 {
			offered = fmt.Sprintf("%.1f", s.Offered)
		}
		if d.ServerMS > 0 {
			server, diff = fmt.Sprintf("%.1fms", d.ServerMS), fmt.Sprintf("%+.1fms", d.DiffMS)
		}
		if d.HitRatio != nil {
			hit = fmt.Sprintf("%.0f%%", 100**d.HitRatio)
		}
		flags := strings.Join(d.Flags, "; ")
		if d.Objective == "misses" {
			flags = strings.TrimPrefix(flags+"; over the objective", "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%.1f\t%.2f%%\t%.1fms\t%s\t%s\t%s\t%s\t\n", s.Name, offered, d.SendRate, d.Throughput, 100*d.Success, d.LatencyMS, server, diff, hit, flags)
	}
	tw.Flush()
}
