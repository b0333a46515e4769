package experiment

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// Spec is one experiment to run.
type Spec struct {
	Plan        *plan.Plan
	Vars        *plan.Vars
	Seed        int64
	Target      string // the base URL load goes to
	Shown       string // the target as the report names it (secrets redacted)
	CAFile      string
	Shard       load.Shard
	Start       time.Time // the shared schedule origin of shards; zero: now
	ScrapeEvery time.Duration
	PID         int            // the target's process on this machine: its memory is sampled each second
	Progress    func(Progress) // optional, about once a second
}

// Progress is what the terminal line shows.
type Progress struct {
	Ramp     string // "" for the main ramp, else "control"
	Stage    int
	Stages   int
	Name     string
	Snapshot load.Snapshot
}

// FormatProgress is the live line (no newline).
func FormatProgress(p Progress) string {
	ramp := ""
	if p.Ramp != "" {
		ramp = p.Ramp + " "
	}
	s := p.Snapshot
	return fmt.Sprintf("%sstage %d/%d %-12s %7.1fs %8.1f req/s  p50 %7.1fms  p99 %7.1fms  failures %d",
		ramp, p.Stage+1, p.Stages, p.Name, s.Elapsed.Seconds(), s.Rate, ms(s.P50), ms(s.P99), s.Failures)
}

// stageMeta is what the report knows of a stage beyond the engine's result.
type stageMeta struct {
	phase, kind string
	begin, end  time.Duration // on the run's clock, warm-up included
	name        string
}

// build turns the plan's [experiment] table into the model to run.
func build(e plan.Experiment, shard load.Shard) (load.Model, []stageMeta, error) {
	var meta []stageMeta
	add := func(name, phase, kind string, warm, length time.Duration) {
		var at time.Duration
		if n := len(meta); n > 0 {
			at = meta[n-1].end
		}
		meta = append(meta, stageMeta{name: name, phase: phase, kind: kind, begin: at, end: at + warm + length})
	}
	switch e.Model {
	case "closed":
		for _, c := range e.Concurrency {
			add(fmt.Sprintf("c=%d", c), "", "", e.Warmup, e.Stage)
		}
		return &load.ClosedLoop{Levels: e.Concurrency, Warmup: e.Warmup, Duration: e.Stage, Shard: shard}, meta, nil
	case "open":
		m := &load.OpenLoop{Shard: shard}
		for _, r := range e.Rates {
			m.Stages = append(m.Stages, load.OpenStage{From: r, To: r, Warmup: e.Warmup, Duration: e.Stage})
			add(fmt.Sprintf("%g/s", r), "", "", e.Warmup, e.Stage)
		}
		for pi, ph := range e.Phases {
			for j := 0; j < ph.Steps; j++ {
				from := ph.From + (ph.To-ph.From)*float64(j)/float64(ph.Steps)
				to := ph.From + (ph.To-ph.From)*float64(j+1)/float64(ph.Steps)
				st := load.OpenStage{From: from, To: to, Duration: ph.Duration / time.Duration(ph.Steps)}
				if pi == 0 && j == 0 {
					st.Warmup = e.Warmup
				}
				st.Name = ph.Name
				if ph.Steps > 1 {
					st.Name = fmt.Sprintf("%s %d/%d", ph.Name, j+1, ph.Steps)
				}
				m.Stages = append(m.Stages, st)
				add(st.Name, ph.Name, ph.Kind, st.Warmup, st.Duration)
			}
		}
		return m, meta, nil
	case "population":
		add(fmt.Sprintf("%d users", e.Users), "", "", e.Warmup, e.Duration)
		return &load.Population{Users: e.Users, Think: e.Think, Warmup: e.Warmup, Duration: e.Duration, Seed: 1, Shard: shard,
			RetryShare: e.RetryShare, RetryAfter: e.RetryAfter}, meta, nil
	case "clients":
		add(fmt.Sprintf("%d clients", e.Clients), "", "", e.Warmup, e.Duration)
		return &load.Clients{Clients: e.Clients, RampUp: e.RampUp, Throughput: e.Throughput, Warmup: e.Warmup,
			Duration: e.Duration, AbortOnError: e.OnError == "abort", Shard: shard}, meta, nil
	}
	return nil, nil, fmt.Errorf("the plan's [experiment] names no model it can run (%q)", e.Model)
}

// Run runs the experiment and analyses it. An error means nothing useful
// ran; a canceled run returns its partial report.
func Run(ctx context.Context, spec Spec) (*Report, error) {
	p := spec.Plan
	e := p.Experiment
	if !e.Written {
		return nil, fmt.Errorf("%s: the plan has no [experiment] table; add one, for example [experiment] model = \"closed\" max_concurrency = 32 (docs/experiment.md)", p.Path)
	}
	if spec.ScrapeEvery <= 0 {
		spec.ScrapeEvery = time.Second
	}
	rep := &Report{Version: Version, Kind: Kind, Target: spec.Shown, Plan: p.Path, Model: e.Model, Settings: settings(p)}
	if spec.Shard.Of > 1 {
		rep.Shard = fmt.Sprintf("%d/%d", spec.Shard.Index, spec.Shard.Of)
	}
	main, err := spec.ramp(ctx, e.Group, "", true)
	if err != nil {
		return nil, err
	}
	rep.Started, rep.Canceled = main.started, main.canceled
	rep.Stages, rep.Series, rep.Gauges, rep.Clients = main.stages, main.series, main.gauges, main.clients
	rep.Settings.Retriers = main.retriers
	rep.Notes = append(rep.Notes, main.notes...)
	if e.Control != "" && ctx.Err() == nil {
		ctl, err := spec.ramp(ctx, e.Control, "control", false)
		if err != nil {
			return nil, fmt.Errorf("the control ramp: %w", err)
		}
		rep.Control = &Ramp{Group: e.Control, Stages: ctl.stages}
		rep.Canceled = rep.Canceled || ctl.canceled
	}
	if rep.Model == "population" && spec.Shard.Of > 1 {
		rep.Settings.Users = shareOf(e.Users, spec.Shard)
	}
	rep.Settings.Notes = rep.Notes
	Analyze(rep)
	return rep, nil
}

// shareOf is how many of n workers, users or clients a shard runs.
func shareOf(n int, s load.Shard) int {
	if s.Of <= 1 {
		return n
	}
	c := 0
	for i := range n {
		if i%s.Of == s.Index {
			c++
		}
	}
	return c
}

func settings(p *plan.Plan) Settings {
	e := p.Experiment
	s := Settings{Percentile: e.Percentile, Success: e.Success, ObjectiveMS: ms(e.Objective), KneeTolerance: e.KneeTolerance, RecoveryS: e.Recovery.Seconds(),
		HitStatus: e.HitStatus, HitHeader: e.HitHeader, HitField: e.HitField, HitValue: e.HitValue, Group: e.Group, WarmupS: e.Warmup.Seconds(), Ramp: e.Model == "closed" || (e.Model == "open" && len(e.Rates) > 0)}
	if e.Model == "open" {
		for _, ph := range e.Phases {
			if ph.Kind == "ramp" {
				s.Ramp = true
			}
		}
	}
	if e.Model == "population" {
		s.Users, s.ThinkS, s.JoinsS = e.Users, e.Think.Seconds(), e.Think.Seconds()
		s.RetryShare, s.RetryAfterS = e.RetryShare, e.RetryAfter.Seconds()
	}
	s.Thresholds = p.Thresholds
	return s
}

type rampResult struct {
	started  time.Time
	canceled bool
	stages   []Stage
	series   []Point
	gauges   []Gauge
	clients  *Clients
	notes    []string
	retriers int // the population's users who drew to retry
}

// ramp runs the model once with one group ("" = the plan's groups).
func (spec *Spec) ramp(ctx context.Context, group, label string, scrape bool) (*rampResult, error) {
	e := spec.Plan.Experiment
	if err := spec.Plan.NoDPoP("perfgate experiment"); err != nil {
		return nil, err
	}
	src, groups, err := spec.Plan.GroupSource(spec.Vars, spec.Seed, group)
	if err != nil {
		return nil, err
	}
	model, meta, err := build(e, spec.Shard)
	if err != nil {
		return nil, err
	}
	start := spec.Start
	if start.IsZero() || label != "" {
		start = time.Now().Add(20 * time.Millisecond)
	}
	a := load.Attack{Target: spec.Target, CAFile: spec.CAFile, Source: src, Groups: groups, Model: model,
		Start: start, ServerTiming: spec.Plan.ServerTiming, Remote: true, Hit: spec.Plan.Experiment.LoadRule(),
		Redact: spec.Vars.Redactor()} // as perfgate load's: any wrong answer's body the engine samples is masked
	if spec.Progress != nil {
		a.Progress = func(s load.Snapshot) {
			i := len(meta) - 1
			for j, m := range meta {
				if s.Elapsed < m.end {
					i = j
					break
				}
			}
			spec.Progress(Progress{Ramp: label, Stage: i, Stages: len(meta), Name: meta[i].name, Snapshot: s})
		}
	}
	var sc *scraper
	var wg sync.WaitGroup
	sctx, stopScrape := context.WithCancel(ctx)
	defer stopScrape()
	if scrape && (len(e.Gauges) > 0 || spec.PID > 0) {
		sc = newScraper(endpoints(spec.Target, e.Gauges), spec.ScrapeEvery, start)
		sc.pid = spec.PID
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc.run(sctx)
		}()
	}
	r, err := load.Run(ctx, a)
	stopScrape()
	wg.Wait()
	if err != nil {
		return nil, fmt.Errorf("running the experiment against %s: %w", spec.Shown, err)
	}
	out := &rampResult{started: r.Start.UTC(), canceled: r.Canceled, retriers: r.Detail.Retriers}
	for i, st := range r.Detail.Stages {
		withFirstWrongAnswer(st.Groups, r.Groups)
		s, err := stageOf(st, spec.Shard)
		if err != nil {
			return nil, err
		}
		if i < len(meta) {
			s.Phase, s.PhaseKind = meta[i].phase, meta[i].kind
		}
		out.stages = append(out.stages, s)
	}
	for _, p := range r.Detail.Series {
		out.series = append(out.series, Point{AtS: p.At.Seconds(), Stage: p.Stage, Done: p.Done, Failures: p.Failures,
			P50MS: ms(p.P50), P95MS: ms(p.P95), P99MS: ms(p.P99), ServerP95MS: ms(p.ServerP95)})
	}
	if r.Detail.Model == "population" && len(out.stages) > 0 {
		// One stage: the users' actions and waits are the run's.
		out.stages[0].Actions, out.stages[0].WaitS = r.Detail.Actions, r.Detail.Waited.Seconds()
	}
	if r.Detail.Model == "clients" {
		c := &Clients{}
		for _, s := range r.Detail.ClientStarts {
			c.StartsS = append(c.StartsS, s.Seconds())
		}
		if ab := r.Detail.Abort; ab != nil {
			c.Abort = &Abort{AtS: ab.At.Seconds(), Clients: ab.Clients, Rate: ab.Rate, Group: ab.Group, Status: ab.Status, Error: ab.Error, Text: ab.String()}
		}
		out.clients = c
	}
	if sc != nil {
		out.gauges, out.notes = sc.result()
		// "/metrics" was resolved against the target as sent; the report
		// names it as shown, like the target itself.
		for i := range out.gauges {
			out.gauges[i].Endpoint = spec.Vars.Redact(out.gauges[i].Endpoint)
		}
		for i := range out.notes {
			out.notes[i] = spec.Vars.Redact(out.notes[i])
		}
	}
	return out, nil
}

// endpoints resolves "/metrics" against the target.
func endpoints(target string, gauges []plan.GaugeSource) []plan.GaugeSource {
	var out []plan.GaugeSource
	for _, g := range gauges {
		if strings.HasPrefix(g.URL, "/") {
			g.URL = strings.TrimSuffix(target, "/") + g.URL
		}
		out = append(out, g)
	}
	return out
}

// withFirstWrongAnswer gives each stage group that answered wrong its
// group's first wrong answer of the run (warm-ups included): the engine
// samples one a group and attack, masked (load.ShowBody), and hands it to
// the run's groups only, so a stage's group would carry the count without
// the body that explains it. Each stage that answered wrong then shows the
// sample the load report's group shows.
func withFirstWrongAnswer(stage, run []*load.GroupStats) {
	for _, g := range stage {
		if g.WrongAnswers == 0 || g.WrongAnswer != nil {
			continue
		}
		for _, rg := range run {
			if rg.Name == g.Name {
				g.WrongAnswer = rg.WrongAnswer
			}
		}
	}
}

// stageOf turns an engine stage into the report's, histograms whole.
func stageOf(st *load.StageResult, shard load.Shard) (Stage, error) {
	lr, err := load.NewReport(load.ReportMeta{}, &load.Result{Groups: st.Groups})
	if err != nil {
		return Stage{}, fmt.Errorf("encoding stage %s: %w", st.Name, err)
	}
	offered := st.Offered
	if shard.Of > 1 {
		offered /= float64(shard.Of) // this shard's share of the schedule
	}
	return Stage{Name: st.Name, Level: st.Level, Offered: offered, StartS: st.Start.Seconds(), LengthS: st.Length.Seconds(),
		WarmupS: st.Warmup.Seconds(), Sent: st.Sent, Completed: st.Completed, Retries: st.Retries, Total: lr.Total, Groups: lr.Groups}, nil
}
