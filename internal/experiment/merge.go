package experiment

import (
	"fmt"
	"math"
	"sort"

	"github.com/perfgate/perfgate/internal/load"
)

// Compare sets r.Previous from an earlier report of the same experiment:
// the four routine numbers side by side, and a failure (exit 1) when the
// knee moved down by more than the plan's knee tolerance.
func Compare(r, prev *Report, file string) {
	c := &Comparison{File: file, Before: prev.Routine}
	now, before := r.Routine, prev.Routine
	if before.Knee != nil && now.Knee != nil {
		line := fmt.Sprintf("the knee moved from %.1f/s to %.1f/s", *before.Knee, *now.Knee)
		if *now.Knee < *before.Knee*(1-r.Settings.KneeTolerance) {
			c.Failed = true
			line += fmt.Sprintf(", down by more than the %.0f %% tolerance", 100*r.Settings.KneeTolerance)
		}
		c.Lines = append(c.Lines, line)
	} else if before.Knee != nil {
		c.Lines = append(c.Lines, fmt.Sprintf("the previous run's knee was %.1f/s; this run found none", *before.Knee))
	}
	if before.FirstResource != "" || now.FirstResource != "" {
		c.Lines = append(c.Lines, fmt.Sprintf("first resource to run out: %s at level %s, now %s at level %s",
			orNone(before.FirstResource), num(before.FirstResourceAt), orNone(now.FirstResource), num(now.FirstResourceAt)))
	}
	if before.PlateauGrowth != nil || now.PlateauGrowth != nil {
		c.Lines = append(c.Lines, fmt.Sprintf("plateau growth: %s ms/min, now %s ms/min", num(before.PlateauGrowth), num(now.PlateauGrowth)))
	}
	if before.RecoveryS != nil || now.RecoveryS != nil {
		c.Lines = append(c.Lines, fmt.Sprintf("recovery after the spike: %s s, now %s s", num(before.RecoveryS), num(now.RecoveryS)))
	}
	r.Previous = c
	if c.Failed && r.Exit < 1 {
		r.Exit, r.Verdict = 1, c.Lines[0]
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func num(f *float64) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprintf("%.1f", *f)
}

// Merge adds shard reports of one experiment together: counts add, HDR
// histograms merge exactly, so the merged percentiles are those one
// generator would have measured. The per-second series adds counts and
// keeps the worst shard's percentiles for the second (a per-second
// histogram is not kept); the gauges are the first shard's (every shard
// scrapes the same target).
func Merge(reps []*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("merging experiment reports: none given")
	}
	first := reps[0]
	out := *first
	out.Shard, out.Shards = "", len(reps)
	out.Stages = nil
	out.Previous = nil
	seen := map[string]bool{}
	for i, r := range reps {
		if r.Model != first.Model || len(r.Stages) != len(first.Stages) {
			return nil, fmt.Errorf("merging experiment reports: report %d is a %s experiment of %d stages, the first a %s one of %d", i+1, r.Model, len(r.Stages), first.Model, len(first.Stages))
		}
		if r.Shard != "" {
			if seen[r.Shard] {
				return nil, fmt.Errorf("merging experiment reports: shard %s given twice", r.Shard)
			}
			seen[r.Shard] = true
		}
		if i > 0 {
			out.Settings.Users += r.Settings.Users
			out.Settings.Retriers += r.Settings.Retriers
			out.Canceled = out.Canceled || r.Canceled
		}
	}
	for si := range first.Stages {
		var parts []Stage
		for _, r := range reps {
			parts = append(parts, r.Stages[si])
		}
		s, err := mergeStage(parts)
		if err != nil {
			return nil, err
		}
		out.Stages = append(out.Stages, s)
	}
	out.Series = mergeSeries(reps)
	if first.Clients != nil {
		c := &Clients{}
		for _, r := range reps {
			if r.Clients == nil {
				continue
			}
			c.StartsS = append(c.StartsS, r.Clients.StartsS...)
			if a := r.Clients.Abort; a != nil && (c.Abort == nil || a.AtS < c.Abort.AtS) {
				c.Abort = a
			}
		}
		sort.Float64s(c.StartsS)
		out.Clients = c
	}
	if first.Control != nil {
		ctl := *first.Control
		ctl.Stages = nil
		for si := range first.Control.Stages {
			var parts []Stage
			for _, r := range reps {
				if r.Control != nil && si < len(r.Control.Stages) {
					parts = append(parts, r.Control.Stages[si])
				}
			}
			s, err := mergeStage(parts)
			if err != nil {
				return nil, err
			}
			ctl.Stages = append(ctl.Stages, s)
		}
		out.Control = &ctl
	}
	Analyze(&out)
	return &out, nil
}

func mergeStage(parts []Stage) (Stage, error) {
	s := parts[0]
	s.Sent, s.Completed, s.Offered, s.Retries, s.Actions, s.WaitS = 0, 0, 0, 0, 0, 0
	var totals []*load.GroupStats
	byName := map[string][]*load.GroupStats{}
	var names []string
	for _, p := range parts {
		s.Sent += p.Sent
		s.Completed += p.Completed
		s.Retries += p.Retries
		s.Actions += p.Actions
		s.WaitS += p.WaitS
		s.Offered += p.Offered
		res, err := (&load.Report{Groups: append([]load.GroupReport{p.Total}, p.Groups...)}).Result()
		if err != nil {
			return s, fmt.Errorf("merging stage %s: %w", p.Name, err)
		}
		totals = append(totals, res.Groups[0])
		for _, g := range res.Groups[1:] {
			if _, ok := byName[g.Name]; !ok {
				names = append(names, g.Name)
			}
			byName[g.Name] = append(byName[g.Name], g)
		}
	}
	groups := []*load.GroupStats{}
	for _, n := range names {
		groups = append(groups, load.Merge(byName[n]))
	}
	lr, err := load.NewReport(load.ReportMeta{}, &load.Result{Groups: groups})
	if err != nil {
		return s, fmt.Errorf("merging stage %s: %w", s.Name, err)
	}
	tr, err := load.NewReport(load.ReportMeta{}, &load.Result{Groups: []*load.GroupStats{load.Merge(totals)}})
	if err != nil {
		return s, fmt.Errorf("merging stage %s: %w", s.Name, err)
	}
	s.Groups, s.Total = lr.Groups, tr.Total
	return s, nil
}

func mergeSeries(reps []*Report) []Point {
	by := map[float64]*Point{}
	for _, r := range reps {
		for _, p := range r.Series {
			at := math.Round(p.AtS)
			m := by[at]
			if m == nil {
				c := p
				c.AtS = at
				by[at] = &c
				continue
			}
			m.Done += p.Done
			m.Failures += p.Failures
			m.P50MS, m.P95MS, m.P99MS = math.Max(m.P50MS, p.P50MS), math.Max(m.P95MS, p.P95MS), math.Max(m.P99MS, p.P99MS)
			m.ServerP95MS = math.Max(m.ServerP95MS, p.ServerP95MS)
		}
	}
	var out []Point
	for _, p := range by {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AtS < out[j].AtS })
	return out
}
