package experiment

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// The knee rule, stage by stage up the ramp: stage i is the knee when the
// next stage either fails the success gate, or raised the load by some
// fraction while throughput rose by less than half that fraction and the
// latency percentile climbed by more than a fifth. Only stages that pass
// the success gate count; the first stage must.
const (
	kneeGain  = 0.5 // throughput must rise by at least this share of the load's rise
	kneeClimb = 1.2 // latency climbing by more than this factor is climbing
)

// KneeRule is the rule in words, printed beside the knee.
const KneeRule = "the last stage before throughput rose by less than half the load's rise while the latency climbed by more than 20 %, or before a stage under the success gate"

// Analyze derives every figure of the report from its stages, series and
// gauges, and decides the exit code (before any comparison with a previous
// run, which Compare adds).
func Analyze(r *Report) {
	r.Notes, r.Warnings = append([]string(nil), r.Settings.Notes...), nil
	st := r.Settings
	deriveStages(r.Stages, st)
	if r.Control != nil {
		deriveStages(r.Control.Stages, st)
	}
	r.Warnings = append(r.Warnings, wrongAnswerLines(r)...)
	r.Knee, r.Population, r.Phases, r.RanOut = nil, nil, nil, nil
	if st.Ramp {
		r.Knee = knee(r.Stages)
		if r.Control != nil {
			r.Control.Knee = knee(r.Control.Stages)
			r.Control.Note = controlNote(r.Knee, r.Control)
		}
	}
	r.Little = little(r)
	if r.Model == "population" && len(r.Stages) > 0 {
		r.Population = population(r)
	}
	r.Phases = phases(r)
	gauges(r)
	r.Thresholds = thresholds(r)
	routine(r)
	aborted := r.Clients != nil && r.Clients.Abort != nil

	r.Exit, r.Verdict = 0, "answered"
	if aborted {
		// The abort is the answer the run was for: where errors began.
		r.Verdict = "answered: " + r.Clients.Abort.Text
	}
	fail := func(code int, why string) {
		if code > r.Exit {
			r.Exit, r.Verdict = code, why
		}
	}
	for _, th := range r.Thresholds {
		if th.Fail {
			fail(1, th.Says)
			break
		}
	}
	for _, p := range r.Phases {
		if p.Failed {
			fail(1, p.Text)
			break
		}
	}
	switch {
	case aborted:
	case r.Canceled:
		fail(2, "canceled: the figures are partial")
	case len(r.Stages) == 0:
		fail(2, "no stage was measured")
	case !r.Stages[0].Derived.Counts:
		fail(2, fmt.Sprintf("the first stage (%s) is already under the %.0f %% success gate: lower the ramp's start", r.Stages[0].Name, 100*st.Success))
	case st.Ramp && r.Knee == nil:
		last := r.Stages[len(r.Stages)-1]
		fail(2, fmt.Sprintf("no knee within the ramp: throughput still rose at the last stage (%s, %.1f/s); extend the ramp", last.Name, last.Derived.Throughput))
	}
}

// wrongAnswerLines sums each group's wrong answers over every stage, the
// control ramp's too, one line per group in name order with its first
// sample, as the load report and the gate name them. The stage table's
// flags give the counts stage by stage; the body that explains them is
// said once.
func wrongAnswerLines(r *Report) []string {
	var t load.WrongAnswerTally
	stages := r.Stages
	if r.Control != nil {
		stages = append(append([]Stage(nil), stages...), r.Control.Stages...)
	}
	for _, s := range stages {
		for _, g := range s.Groups {
			t.Add(g.Name, g.WrongAnswers, g.WrongAnswer)
		}
	}
	return t.Lines()
}

func hist(hr *load.HistReport) *hdrhistogram.Histogram {
	if hr == nil || hr.HDR == "" {
		return nil
	}
	h, err := hdrhistogram.Decode([]byte(hr.HDR))
	if err != nil {
		return nil
	}
	return h
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func deriveStages(stages []Stage, st Settings) {
	var firstServer float64
	for i := range stages {
		s := &stages[i]
		d := StageFigures{}
		if s.LengthS > 0 {
			d.Throughput = float64(s.Completed) / s.LengthS
			d.SendRate = float64(s.Sent) / s.LengthS
			d.RetryRate = float64(s.Retries) / s.LengthS
		}
		t := s.Total
		if t.Requests > 0 {
			d.Success = float64(t.Expected) / float64(t.Requests)
		}
		lat := hist(t.Latency)
		d.LatencyMS = ms(load.NearestRank(lat, st.Percentile))
		if lat != nil {
			d.MeanMS = lat.Mean() / 1e3
		}
		if srv := hist(t.Server); srv != nil {
			d.ServerMS = ms(load.NearestRank(srv, st.Percentile))
			d.DiffMS = d.LatencyMS - d.ServerMS
			if firstServer == 0 {
				firstServer = d.ServerMS
			}
		}
		if (st.HitHeader != "" || st.HitField != "" || len(st.HitStatus) > 0) && t.Expected > 0 {
			// The engine judged each answer by the rule (load.HitRule):
			// a status too, since only it knows which answers with that
			// status were expected and right; a count of the status alone
			// would take in wrong answers and unexpected ones.
			hits := t.Hits
			if t.HitBeyond > 0 {
				d.Flags = append(d.Flags, fmt.Sprintf("%d answers had %s past the first %d KiB of the body, which is all perfgate reads: counted as misses",
					t.HitBeyond, st.HitField, load.MaxHitBody>>10))
			}
			hr := float64(hits) / float64(t.Expected)
			d.HitRatio = &hr
			if hr < 0.5 {
				d.Flags = append(d.Flags, fmt.Sprintf("mostly misses (hit ratio %.0f %%): cheap answers may flatter the latency", 100*hr))
			}
		}
		d.Counts = t.Requests > 0 && d.Success >= st.Success
		pname := fmt.Sprintf("p%g", st.Percentile)
		if st.ObjectiveMS > 0 {
			if d.LatencyMS < st.ObjectiveMS {
				d.Objective = "meets"
			} else {
				d.Objective = "misses"
			}
		}
		failed := t.Requests - t.Expected
		if !d.Counts && t.Requests > 0 {
			d.Flags = append(d.Flags, fmt.Sprintf("under the %.0f %% success gate (%.2f %% failed)", 100*st.Success, 100*(1-d.Success)))
		}
		for _, g := range s.Groups {
			// A wrong answer is already a failure (it is not in Expected,
			// so not in the success); the flag says whose, since a 200
			// with an error body shows nowhere else in the table.
			if g.WrongAnswers > 0 {
				d.Flags = append(d.Flags, load.WrongAnswerLine(g.Name, g.WrongAnswers, nil))
			}
		}
		if shed := t.Statuses[503] + t.Statuses[429]; shed > 0 {
			d.Flags = append(d.Flags, fmt.Sprintf("shedding: %d answers were 503 or 429", shed))
			if !d.Counts && (d.Objective == "meets" || st.ObjectiveMS == 0 && i > 0 && d.LatencyMS <= kneeClimb*stages[0].Derived.LatencyMS) {
				d.Flags = append(d.Flags, fmt.Sprintf("passes on latency while shedding: failures are kept out of the latency, so this %s flatters", pname))
			}
		}
		if s.Offered > 0 && d.Throughput < 0.95*s.Offered {
			switch {
			case d.SendRate < 0.95*s.Offered:
				d.Flags = append(d.Flags, fmt.Sprintf("the generator fell behind: it sent %.1f of the %.1f/s asked for", d.SendRate, s.Offered))
			case failed == 0 && d.ServerMS > 0 && d.ServerMS <= 1.5*firstServer:
				d.Flags = append(d.Flags, fmt.Sprintf("shortfall is the generator's: served %.1f of %.1f/s while the server's %s stayed %.1f ms and nothing failed", d.Throughput, s.Offered, pname, d.ServerMS))
			}
		}
		if s.Retries > 0 {
			// Counted apart so the stage table shows how much of sent/s
			// is the users asking again.
			d.Flags = append(d.Flags, fmt.Sprintf("retries: %d of the sent (%.1f/s) are users' retries", s.Retries, d.RetryRate))
		}
		s.Derived = d
	}
}

func knee(stages []Stage) *Knee {
	for i := 0; i+1 < len(stages); i++ {
		a, b := stages[i].Derived, stages[i+1].Derived
		if !a.Counts {
			return nil
		}
		why := ""
		switch {
		case !b.Counts:
			why = fmt.Sprintf("the next stage (%s) fell under the success gate (%.2f %% succeeded)", stages[i+1].Name, 100*b.Success)
		default:
			loadRise := rise(stages[i+1].Level, stages[i].Level)
			tputRise := rise(b.Throughput, a.Throughput)
			if tputRise < kneeGain*loadRise && b.LatencyMS > kneeClimb*a.LatencyMS {
				why = fmt.Sprintf("from here to %s the load rose %.0f %%, throughput %.0f %%, and the latency went from %.1f to %.1f ms",
					stages[i+1].Name, 100*loadRise, 100*tputRise, a.LatencyMS, b.LatencyMS)
			}
		}
		if why == "" {
			continue
		}
		k := &Knee{Stage: i, Name: stages[i].Name, Level: stages[i].Level, Throughput: a.Throughput, LatencyMS: a.LatencyMS, Why: why, Attribution: "service"}
		failed := stages[i+1].Total.Requests - stages[i+1].Total.Expected
		if a.ServerMS > 0 && b.ServerMS > 0 && b.ServerMS <= kneeClimb*a.ServerMS && failed == 0 {
			k.Attribution = "generator"
			k.Why += fmt.Sprintf("; but the server's own latency stayed %.1f ms and nothing failed, so the ceiling is the generator's, not the service's", b.ServerMS)
		}
		return k
	}
	return nil
}

func rise(b, a float64) float64 {
	if a <= 0 {
		if b > 0 {
			return math.Inf(1)
		}
		return 0
	}
	return b/a - 1
}

func controlNote(main *Knee, c *Ramp) string {
	switch {
	case main != nil && c.Knee == nil:
		return fmt.Sprintf("the control ramp with group %q has no knee where the main ramp has one: the limit is the main group's payload, not the concurrency", c.Group)
	case main != nil && c.Knee != nil && c.Knee.Level == main.Level:
		return fmt.Sprintf("the control ramp with group %q bends at the same level (%g): the limit is the concurrency, not the payload", c.Group, main.Level)
	case main != nil && c.Knee != nil:
		return fmt.Sprintf("the control ramp with group %q bends at %g where the main ramp bends at %g", c.Group, c.Knee.Level, main.Level)
	}
	return ""
}

func little(r *Report) []LittleRow {
	var think float64
	switch r.Model {
	case "closed", "clients":
	case "population":
		think = r.Settings.ThinkS
	default:
		return nil
	}
	var out []LittleRow
	for _, s := range r.Stages {
		d := s.Derived
		row := LittleRow{Stage: s.Name, Users: s.Level, Throughput: d.Throughput, LatencyS: d.MeanMS / 1e3, ThinkS: think}
		row.Implied = row.Throughput * (row.LatencyS + row.ThinkS)
		out = append(out, row)
	}
	return out
}

func population(r *Report) *Population {
	s := r.Stages[0]
	st := r.Settings
	think := time.Duration(st.ThinkS * 1e9)
	lat := s.Derived.MeanMS / 1e3
	p := &Population{Users: st.Users, ThinkS: st.ThinkS, Offered: float64(st.Users) / st.ThinkS,
		Expected: float64(st.Users) / (st.ThinkS + lat), Achieved: s.Derived.Throughput,
		ThinkTimes: load.ThinkTimes(time.Duration(s.LengthS*1e9), think), JoinsInside: st.WarmupS < st.JoinsS, Bias: 1}
	if p.JoinsInside {
		p.Bias = load.JoiningBias(time.Duration(s.LengthS*1e9), think)
	}
	// A retry is a second request for one action of a user: the users'
	// own rate, held against what N / (think + wait) predicts, is what
	// was served less the retries' rate, and what they offered the target
	// is N / think plus that rate. The wait is the users' own (from an
	// action's send to the answer they took), since the mean latency
	// counts the slow answers they walked away from and would predict
	// too little.
	own, apart, waitWord := p.Achieved, "", "latency"
	if st.RetryShare > 0 {
		p.RetryShare, p.RetryAfterS, p.Retriers = st.RetryShare, st.RetryAfterS, st.Retriers
		p.Retries, p.RetryRate = s.Retries, s.Derived.RetryRate
		p.OfferedWithRetries = p.Offered + p.RetryRate
		p.Retry = fmt.Sprintf("retries: %d of %d users retry an answer slower than %s or failed (retry_share %g); they sent %d retries, %.1f/s, each a request of its own inside sent/s; offered with them %.1f/s (%.1f/s users / think + %.1f/s retries)",
			p.Retriers, p.Users, time.Duration(p.RetryAfterS*1e9), p.RetryShare, p.Retries, p.RetryRate, p.OfferedWithRetries, p.Offered, p.RetryRate)
		if s.Actions > 0 {
			p.WaitMS = 1e3 * s.WaitS / float64(s.Actions)
			p.Expected, waitWord = float64(st.Users)/(st.ThinkS+p.WaitMS/1e3), "wait"
			p.Retry += fmt.Sprintf("; the users waited %.1f ms an action, the mean latency %.1f ms counting the answers they walked away from", p.WaitMS, s.Derived.MeanMS)
		}
		if p.RetryRate > 0 {
			own = max(p.Achieved-p.RetryRate, 0)
			apart = fmt.Sprintf(" (their retries' %.1f/s apart)", p.RetryRate)
		}
	}
	short := p.JoinsInside && p.ThinkTimes < load.MinThinkTimes
	switch {
	case short:
		need := time.Duration(float64(load.MinThinkTimes) * st.ThinkS * 1e9)
		p.Verdict = fmt.Sprintf("no saturation verdict: over %.1f think times with the joins inside the window the rate reads about %.0f %% high (1 + 1/(2k)), so %.1f/s may hide a population that did not keep up; run for at least %s (10 think times), or warm up for one think time (%s) so every user has joined first. The latency figures stand.",
			p.ThinkTimes, 100*(p.Bias-1), p.Achieved, need, think)
		r.Warnings = append(r.Warnings, p.Verdict)
	case own < 0.95*p.Expected/p.Bias:
		p.Verdict = fmt.Sprintf("saturated: %d users offered %.1f/s and received %.1f/s%s, under the %.1f/s they get when nothing makes them wait", p.Users, p.Offered, own, apart, p.Expected)
	default:
		p.Verdict = fmt.Sprintf("kept up: %d users received %.1f/s%s of the %.1f/s users / (think + %s) predicts", p.Users, own, apart, p.Expected, waitWord)
	}
	return p
}

// stageAt is the stage a time falls in (the last one past the end).
func stageAt(stages []Stage, at float64) int {
	for i, s := range stages {
		if at < s.StartS+s.LengthS {
			return i
		}
	}
	return len(stages) - 1
}

// phases reads each plateau's growth and each spike's recovery.
func phases(r *Report) []PhaseFigures {
	var out []PhaseFigures
	type window struct {
		name, kind string
		from, to   float64
		first      int
	}
	var ws []window
	for i, s := range r.Stages {
		if s.Phase == "" {
			continue
		}
		if len(ws) == 0 || ws[len(ws)-1].name != s.Phase {
			ws = append(ws, window{name: s.Phase, kind: s.PhaseKind, from: s.StartS, first: i})
		}
		ws[len(ws)-1].to = s.StartS + s.LengthS
	}
	for wi, w := range ws {
		switch w.kind {
		case "plateau":
			f := PhaseFigures{Phase: w.name, Kind: w.kind}
			var xs, ys []float64
			for _, p := range r.Series {
				if p.AtS >= w.from && p.AtS+1 <= w.to && p.P95MS > 0 {
					xs, ys = append(xs, p.AtS/60), append(ys, p.P95MS)
				}
			}
			if g, ok := slope(xs, ys); ok {
				f.LatencyGrowth = &g
			}
			for _, gs := range r.Gauges {
				var gx, gy []float64
				for _, s := range gs.Samples {
					if s.AtS >= w.from && s.AtS <= w.to {
						gx, gy = append(gx, s.AtS/60), append(gy, s.Value)
					}
				}
				if g, ok := slope(gx, gy); ok {
					if f.GaugeGrowth == nil {
						f.GaugeGrowth = map[string]float64{}
					}
					f.GaugeGrowth[gs.Name] = g
				}
			}
			if f.LatencyGrowth != nil {
				f.Text = fmt.Sprintf("plateau %q: p95 drifted %+.2f ms a minute", w.name, *f.LatencyGrowth)
			} else {
				f.Text = fmt.Sprintf("plateau %q: too short for a growth rate (under two seconds of answers)", w.name)
			}
			for _, gs := range r.Gauges {
				if g, ok := f.GaugeGrowth[gs.Name]; ok && (strings.HasPrefix(gs.Name, "process_rss_bytes") || strings.HasPrefix(gs.Name, "process_resident_memory_bytes")) {
					f.Text += fmt.Sprintf("; %s grew %+.2f MB a minute", gs.Name, g/1e6)
				}
			}
			out = append(out, f)
		case "spike":
			f := PhaseFigures{Phase: w.name, Kind: w.kind}
			prev := -1
			for j := wi - 1; j >= 0 && prev < 0; j-- {
				if ws[j].kind == "plateau" {
					prev = j
				}
			}
			if prev < 0 && wi > 0 {
				prev = wi - 1
			}
			base := 0.0
			if prev >= 0 {
				base = p95Over(r, ws[prev].from, ws[prev].to)
			}
			if base <= 0 {
				f.Text = fmt.Sprintf("spike %q: no phase before it to recover to", w.name)
				out = append(out, f)
				continue
			}
			for _, p := range r.Series {
				if p.AtS >= w.to && p.P95MS > 0 && p.P95MS <= 1.1*base {
					rec := p.AtS - w.to
					f.RecoveryS = &rec
					break
				}
			}
			// The limit: the plan's recovery, else the recovery phase that
			// follows the spike (none: only the warning below).
			limit, limitWhat := r.Settings.RecoveryS, fmt.Sprintf("recovery = %gs", r.Settings.RecoveryS)
			if limit == 0 && wi+1 < len(ws) && ws[wi+1].kind == "recovery" {
				limit, limitWhat = ws[wi+1].to-ws[wi+1].from, fmt.Sprintf("the %.0f s recovery phase %q", ws[wi+1].to-ws[wi+1].from, ws[wi+1].name)
			}
			if limit > 0 {
				f.RecoveryLimit = &limit
			}
			switch {
			case f.RecoveryS != nil && (limit == 0 || *f.RecoveryS <= limit):
				f.Text = fmt.Sprintf("spike %q: p95 was back within 10 %% of the plateau's %.1f ms %.0f s after the spike ended", w.name, base, *f.RecoveryS)
			case f.RecoveryS != nil:
				f.Failed = true
				f.Text = fmt.Sprintf("spike %q: p95 was back within 10 %% of the plateau's %.1f ms only %.0f s after the spike ended, past %s", w.name, base, *f.RecoveryS, limitWhat)
			case limit > 0:
				f.Failed = true
				f.Text = fmt.Sprintf("spike %q: p95 did not come back within 10 %% of the plateau's %.1f ms within %s", w.name, base, limitWhat)
			default:
				f.Text = fmt.Sprintf("spike %q: p95 did not come back within 10 %% of the plateau's %.1f ms before the run ended", w.name, base)
				r.Warnings = append(r.Warnings, f.Text)
			}
			out = append(out, f)
		}
	}
	return out
}

// p95Over is the median of the per-second p95 over a window: one slow
// second does not move it.
func p95Over(r *Report, from, to float64) float64 {
	var v []float64
	for _, p := range r.Series {
		if p.AtS >= from && p.AtS+1 <= to && p.P95MS > 0 {
			v = append(v, p.P95MS)
		}
	}
	if len(v) == 0 {
		return 0
	}
	sort.Float64s(v)
	return v[len(v)/2]
}

// slope is the least-squares slope of y over x; false under two points.
func slope(xs, ys []float64) (float64, bool) {
	n := float64(len(xs))
	if len(xs) < 2 {
		return 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, false
	}
	return (n*sxy - sx*sy) / den, true
}

// thresholds judges the plan's [[threshold]] limits over every measured
// stage pooled, as perfgate load does over its one window
// (judge.JudgeThresholds).
func thresholds(r *Report) []judge.ThresholdResult {
	if len(r.Settings.Thresholds) == 0 {
		return nil
	}
	var names []string
	byName := map[string]*load.GroupStats{}
	for _, s := range r.Stages {
		res, err := (&load.Report{Groups: s.Groups}).Result()
		if err != nil {
			continue
		}
		for _, g := range res.Groups {
			if _, ok := byName[g.Name]; !ok {
				names = append(names, g.Name)
			}
			byName[g.Name] = load.Merge([]*load.GroupStats{byName[g.Name], g})
		}
	}
	groups := make([]*load.GroupStats, len(names))
	for i, n := range names {
		groups[i] = byName[n]
		groups[i].Name = n
	}
	return judge.JudgeThresholds(plan.Limits(r.Settings.Thresholds), groups, names)
}

func routine(r *Report) {
	r.Routine = Routine{}
	if k := r.Knee; k != nil {
		r.Routine.Knee, r.Routine.KneeLevel = &k.Throughput, &k.Level
	}
	if m := r.RanOut; m != nil {
		r.Routine.FirstResource, r.Routine.FirstResourceAt = m.Gauge, &m.Level
	}
	for _, p := range r.Phases {
		if p.Kind == "plateau" && p.LatencyGrowth != nil && r.Routine.PlateauGrowth == nil {
			r.Routine.PlateauGrowth = p.LatencyGrowth
		}
		if p.Kind == "spike" && p.RecoveryS != nil && r.Routine.RecoveryS == nil {
			r.Routine.RecoveryS = p.RecoveryS
		}
	}
}
