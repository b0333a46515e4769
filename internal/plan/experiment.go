package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// Experiment is the plan's [experiment] table: a capacity experiment for
// `perfgate experiment` (docs/experiment.md). Model picks the load model;
// only the keys of that model may be written.
type Experiment struct {
	Written bool
	Model   string // "open", "closed", "population", "clients"
	Group   string // the group the experiment sends; "" = every group
	Control string // a second ramp with this group alone, to tell concurrency from payload

	Warmup time.Duration // each stage's warm-up (clients: the whole ramp-up unless written)
	Stage  time.Duration // each stage's measured window (open, closed)

	Concurrency []int     // closed: the levels
	Rates       []float64 // open: stepped plateaus, arrivals/s
	Phases      []Phase   // open: ramp, plateau, spike, recovery
	// Recovery is how soon after a spike ends its p95 must be back within
	// 10 % of the plateau's, or the experiment fails; 0 = by the end of
	// the recovery phase after the spike (open model only).
	Recovery time.Duration

	Users    int           // population
	Think    time.Duration // population: the mean think time
	Duration time.Duration // population, clients: the measured window
	// RetryShare is the share of a population's users (0 to 1) who retry
	// an answer slower than RetryAfter, or failed (load.Population); 0 =
	// nobody retries.
	RetryShare float64
	RetryAfter time.Duration

	Clients    int           // clients
	RampUp     time.Duration // clients: client i starts at i*ramp_up/clients
	Throughput float64       // clients: total requests/s shared; 0 = flat out
	OnError    string        // clients: "continue" or "abort"

	Success       float64       // fraction of answers a stage needs to count toward capacity (plan writes percent)
	Percentile    float64       // the latency percentile the knee and the objective read (95 for "p95")
	Objective     time.Duration // the latency objective: the percentile must stay strictly below; 0 = none
	KneeTolerance float64       // fraction: a knee lower than the previous run's by more is a regression
	HitRule                     // hit_status, hit_header or hit_field: which answers are hits (hit.go)
	Gauges        []GaugeSource // Prometheus endpoints scraped every second; "/metrics" alone means the target's
	Line          int
}

// GaugeSource is one entry of gauges: an endpoint, and optionally one
// metric of it read whatever its type: a gauge as it is, a counter as its
// rate per second, a histogram (or a summary) as Quantile over each scrape
// interval. Without Metric the endpoint's gauges and untyped values are
// read and its counters and histograms skipped.
type GaugeSource struct {
	URL      string  // "/metrics" (the target's own) or a full URL
	Metric   string  // a metric family's name; "" = every gauge
	Quantile float64 // for a histogram or summary, in (0, 1); 0 = 0.99
}

// Phase is one phase of an open-loop experiment: the rate moves linearly
// from From to To over Duration. Steps cuts it into that many stages for
// the knee. Kind ("ramp", "plateau", "spike", "recovery") tells the report
// what to read from it: a plateau's growth, a spike's recovery.
type Phase struct {
	Name, Kind string
	From, To   float64
	Duration   time.Duration
	Steps      int
	Line       int
}

var experimentModels = []string{"open", "closed", "population", "clients"}

// retryKeys are the population's users who retry: refused under another
// model in words of their own, since "unknown key" would not say which
// model they need.
var retryKeys = []string{"retry_share", "retry_after"}

var phaseKinds = []string{"ramp", "plateau", "spike", "recovery"}

// defaultExperiment holds the defaults: 99 % success, p95, a knee may move
// 10 % before it is a regression.
func defaultExperiment() Experiment {
	return Experiment{Warmup: 2 * time.Second, Stage: 10 * time.Second, Success: 0.99, Percentile: 95,
		KneeTolerance: 0.10, OnError: "continue"}
}

func (ps *parser) experiment(raw map[string]any) {
	ps.p.Experiment = defaultExperiment()
	m, ok := ps.Table(raw, nil, "experiment", `[experiment] with model = "closed"`)
	if !ok {
		return
	}
	ep := []string{"experiment"}
	e := &ps.p.Experiment
	e.Written, e.Line = true, ps.Line(ep)
	common := []string{"model", "group", "control", "warmup", "success", "latency", "objective", "knee_tolerance", "hit_status", "hit_header", "hit_field", "hit_value", "gauges"}
	model, _ := ps.Str(m, ep, "model", `model = "closed"`)
	var own []string
	switch model {
	case "open":
		own = []string{"stage", "rates", "phase", "recovery"}
	case "closed":
		own = []string{"stage", "concurrency", "max_concurrency"}
	case "population":
		own = append([]string{"users", "think", "duration"}, retryKeys...)
	case "clients":
		own = []string{"clients", "ramp_up", "throughput", "on_error", "duration"}
	case "":
		ps.At(ep, "", "[experiment] names no model; write model = %s", quotedList(experimentModels))
		return
	default:
		ps.At(ep, "model", "model %q is not an experiment model; write model = %s", model, tomlpos.OneOf(model, experimentModels, `"%s"`))
		return
	}
	e.Model = model
	if model != "population" {
		for _, k := range retryKeys {
			if _, ok := m[k]; ok {
				ps.At(ep, k, "%s is for the users of model = \"population\", who retry a slow answer, and model %q has none; remove %s, or write model = \"population\" with users and think", k, model, k)
			}
		}
		own = append(own, retryKeys...) // refused just above, not again as unknown
	}
	ps.Known(m, ep, fmt.Sprintf("[experiment] with model = %q", model), append(common, own...)...)
	for _, k := range []struct {
		key string
		dst *string
	}{{"group", &e.Group}, {"control", &e.Control}} {
		if s, ok := ps.Str(m, ep, k.key, k.key+` = "search"`); ok {
			if !ps.hasGroup(s) {
				ps.At(ep, k.key, "%s %q names no [[group]] of this plan; write %s = %s", k.key, s, k.key, tomlpos.OneOf(s, ps.groupNames(), `"%s"`))
			}
			*k.dst = s
		}
	}
	if e.Control != "" && model != "closed" && model != "open" {
		ps.At(ep, "control", "a control ramp repeats a ramp, and model %q has none; remove control, or use model = \"closed\"", model)
	}
	if d, ok := ps.dur(m, ep, "warmup", `warmup = "2s"`, false); ok {
		e.Warmup = d
	}
	if d, ok := ps.dur(m, ep, "stage", `stage = "10s"`, true); ok {
		e.Stage = d
	}
	if f, ok := ps.Num(m, ep, "success", "success = 99", 0, true, 100); ok {
		e.Success = f / 100
	}
	if s, ok := ps.Str(m, ep, "latency", `latency = "p95"`); ok {
		p, err := strconv.ParseFloat(strings.TrimPrefix(s, "p"), 64)
		if !strings.HasPrefix(s, "p") || err != nil || !(p > 0 && p <= 100) {
			ps.At(ep, "latency", "latency %q is not a percentile; write latency = \"p95\" (or p50, p90, p99)", s)
		} else {
			e.Percentile = p
		}
	}
	if d, ok := ps.dur(m, ep, "objective", `objective = "150ms"`, true); ok {
		e.Objective = d
	}
	if f, ok := ps.Num(m, ep, "knee_tolerance", "knee_tolerance = 10", 0, false, 100); ok {
		e.KneeTolerance = f / 100
	}
	ps.hitRule(m, ep, "[experiment]", &e.HitRule)
	ps.hitStatusExpected(ep, e.HitStatus, e.Group)
	if v, ok := m["gauges"]; ok {
		list, isList := v.([]any)
		if !isList {
			list = []any{v}
		}
		for _, g := range list {
			src, ok := gaugeSource(g)
			if !ok {
				ps.At(ep, "gauges", "gauges holds %v; write gauges = [\"/metrics\"] (the target's own), full URLs such as \"http://127.0.0.1:9187/metrics\", or {url = \"/metrics\", metric = \"http_server_duration_seconds\", quantile = 0.99} for one counter or histogram", g)
				break
			}
			e.Gauges = append(e.Gauges, src)
		}
	}
	switch model {
	case "open":
		ps.openExperiment(m, ep, e)
	case "closed":
		ps.closedExperiment(m, ep, e)
	case "population":
		if n, ok := ps.Int(m, ep, "users", "users = 300", 1, 1e6); ok {
			e.Users = int(n)
		} else if _, present := m["users"]; !present {
			ps.At(ep, "", "a population experiment needs its size; write users = 300 under [experiment]")
		}
		if d, ok := ps.dur(m, ep, "think", `think = "30s"`, true); ok {
			e.Think = d
		} else if _, present := m["think"]; !present {
			ps.At(ep, "", "a population experiment needs the mean think time; write think = \"30s\" under [experiment]")
		}
		ps.retry(m, ep, e)
		ps.experimentDuration(m, ep, e)
	case "clients":
		if n, ok := ps.Int(m, ep, "clients", "clients = 20", 1, 1e5); ok {
			e.Clients = int(n)
		} else if _, present := m["clients"]; !present {
			ps.At(ep, "", "a clients experiment needs the number of clients; write clients = 20 under [experiment]")
		}
		if d, ok := ps.dur(m, ep, "ramp_up", `ramp_up = "30m"`, false); ok {
			e.RampUp = d
		}
		if _, written := m["warmup"]; !written {
			// The ramp-up is the warm-up: measuring starts when every
			// client is up.
			e.Warmup = e.RampUp
		}
		if f, ok := ps.Num(m, ep, "throughput", "throughput = 20", 0, false, maxRate); ok {
			e.Throughput = f
		}
		if s, ok := ps.Str(m, ep, "on_error", `on_error = "abort"`); ok {
			if s != "continue" && s != "abort" {
				ps.At(ep, "on_error", "on_error %q is not a choice; write on_error = %s", s, tomlpos.OneOf(s, []string{"continue", "abort"}, `"%s"`))
			}
			e.OnError = s
		}
		ps.experimentDuration(m, ep, e)
	}
}

// retry reads the population's users who retry: retry_share of them
// (from 0 to 1, the on-sale chapter's 0.1) retry an answer slower than
// retry_after. A share without retry_after has no moment to retry at, and
// retry_after without a share retries nobody: both are refused, where a
// written retry_share = 0 (retries switched off) is not.
func (ps *parser) retry(m map[string]any, ep []string, e *Experiment) {
	share, shareOK := ps.Num(m, ep, "retry_share", "retry_share = 0.1 (a tenth of the users)", 0, false, 1)
	if shareOK {
		e.RetryShare = share
	}
	after, afterOK := ps.dur(m, ep, "retry_after", `retry_after = "2s"`, true)
	if afterOK {
		e.RetryAfter = after
	}
	_, shareWritten := m["retry_share"]
	_, afterWritten := m["retry_after"]
	switch {
	case shareOK && share > 0 && !afterWritten:
		ps.At(ep, "retry_share", "retry_share = %s says users retry, and nothing says when; write retry_after = \"2s\" (they retry an answer slower than that) under [experiment]", fnum(share))
	case afterWritten && !shareWritten:
		ps.At(ep, "retry_after", "retry_after says when users retry, and no retry_share says which of them do; write retry_share = 0.1 (a tenth of the users) under [experiment]")
	}
}

func (ps *parser) experimentDuration(m map[string]any, ep []string, e *Experiment) {
	if d, ok := ps.dur(m, ep, "duration", `duration = "300s"`, true); ok {
		e.Duration = d
	} else if _, present := m["duration"]; !present {
		ps.At(ep, "", "the experiment needs its measured duration; write duration = \"300s\" under [experiment]")
	}
}

func (ps *parser) closedExperiment(m map[string]any, ep []string, e *Experiment) {
	_, list := m["concurrency"]
	_, max := m["max_concurrency"]
	switch {
	case list && max:
		ps.At(ep, "max_concurrency", "write the levels as concurrency = [1, 2, 4] or as max_concurrency = 32 (doubling), not both")
	case max:
		if n, ok := ps.Int(m, ep, "max_concurrency", "max_concurrency = 32", 1, 1e5); ok {
			e.Concurrency = load.Doubling(int(n))
		}
	case list:
		e.Concurrency, _ = ps.intList(m, ep, "concurrency", 1, 1e5, "a whole number of workers from 1", "concurrency = [1, 2, 4, 8]")
	default:
		ps.At(ep, "", "a closed-loop experiment needs its levels; write max_concurrency = 32 (1, 2, 4, ... 32) or concurrency = [1, 2, 4, 8]")
	}
	if !ascending(e.Concurrency) {
		ps.At(ep, "concurrency", "the levels must rise from stage to stage for the knee to mean anything; write them in increasing order")
	}
}

func ascending[T int | float64](xs []T) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] <= xs[i-1] {
			return false
		}
	}
	return true
}

func (ps *parser) openExperiment(m map[string]any, ep []string, e *Experiment) {
	if d, ok := ps.dur(m, ep, "recovery", `recovery = "30s"`, true); ok {
		e.Recovery = d
	}
	phases := ps.Tables(m, ep, "phase", `[[experiment.phase]] with name = "ramp", to = 300 and duration = "5m"`)
	_, rates := m["rates"]
	switch {
	case rates && len(phases) > 0:
		ps.At(ep, "rates", "write stepped rates = [50, 100] or [[experiment.phase]] tables, not both")
		return
	case rates:
		arr, ok := m["rates"].([]any)
		if !ok || len(arr) == 0 {
			ps.At(ep, "rates", "rates must be a list of arrival rates; write rates = [50, 100, 200]")
			return
		}
		for _, v := range arr {
			var f float64
			switch n := v.(type) {
			case int64:
				f = float64(n)
			case float64:
				f = n
			}
			if !(f > 0) || f > maxRate {
				ps.At(ep, "rates", "rates holds %v; each is arrivals per second above 0; write rates = [50, 100, 200]", v)
				return
			}
			e.Rates = append(e.Rates, f)
		}
		if !ascending(e.Rates) {
			ps.At(ep, "rates", "the rates must rise from stage to stage for the knee to mean anything; write them in increasing order")
		}
		ps.recoveryNeedsSpike(m, ep, e)
		return
	case len(phases) == 0:
		ps.At(ep, "", "an open-loop experiment needs its stages; write rates = [50, 100, 200] or [[experiment.phase]] tables")
		return
	}
	prev := 0.0
	for i, t := range phases {
		pp := []string{"experiment", "phase", strconv.Itoa(i)}
		ps.Known(t, pp, "[[experiment.phase]]", "name", "kind", "from", "to", "duration", "steps")
		ph := Phase{From: prev, Steps: 1, Line: ps.Line(pp)}
		ph.Name, _ = ps.Str(t, pp, "name", `name = "ramp"`)
		if ph.Name == "" {
			ph.Name = fmt.Sprintf("phase %d", i+1)
		}
		ph.Kind, _ = ps.Str(t, pp, "kind", `kind = "plateau"`)
		if ph.Kind == "" && contains(phaseKinds, ph.Name) {
			ph.Kind = ph.Name
		}
		if ph.Kind != "" && !contains(phaseKinds, ph.Kind) {
			ps.At(pp, "kind", "kind %q is not a phase kind; write kind = %s", ph.Kind, tomlpos.OneOf(ph.Kind, phaseKinds, `"%s"`))
		}
		if f, ok := ps.Num(t, pp, "from", "from = 100", 0, false, maxRate); ok {
			ph.From = f
		}
		if f, ok := ps.Num(t, pp, "to", "to = 3000", 0, false, maxRate); ok {
			ph.To = f
		}
		ps.Need(t, pp, "to", "this phase", "target rate", "to = 3000", "[[experiment.phase]]")
		if d, ok := ps.dur(t, pp, "duration", `duration = "5m"`, true); ok {
			ph.Duration = d
		}
		ps.Need(t, pp, "duration", "this phase", "duration", `duration = "5m"`, "[[experiment.phase]]")
		if n, ok := ps.Int(t, pp, "steps", "steps = 5", 1, 1000); ok {
			ph.Steps = int(n)
		}
		if ph.Duration > 0 && ph.Duration/time.Duration(ph.Steps) <= 0 {
			// Each step is a stage of its own, and a stage of no length
			// measures nothing (the engine refuses it, without this line).
			ps.At(pp, "steps", "steps = %d cuts the %s phase into stages of no length; write fewer steps or a longer duration", ph.Steps, ph.Duration)
		}
		e.Phases = append(e.Phases, ph)
		prev = ph.To
	}
	ps.recoveryNeedsSpike(m, ep, e)
}

// recoveryNeedsSpike refuses a recovery limit with no spike to hold to it:
// the run would judge nothing and say nothing, though the plan asks for a
// verdict.
func (ps *parser) recoveryNeedsSpike(m map[string]any, ep []string, e *Experiment) {
	if _, written := m["recovery"]; !written {
		return
	}
	for _, ph := range e.Phases {
		if ph.Kind == "spike" {
			return
		}
	}
	ps.At(ep, "recovery", "recovery is how soon a spike's p95 must be back, and no [[experiment.phase]] is a spike; remove recovery, or add a phase with kind = \"spike\"")
}

// intList reads a whole number or a list of them, each from lo to hi.
func (ps *parser) intList(m map[string]any, path []string, key string, lo, hi int64, what, example string) ([]int, bool) {
	v, ok := m[key]
	if !ok {
		return nil, false
	}
	list, isList := v.([]any)
	if !isList {
		list = []any{v}
	}
	if len(list) == 0 {
		ps.At(path, key, "%s is empty; write %s", key, example)
		return nil, false
	}
	var out []int
	for _, c := range list {
		n, isInt := c.(int64)
		if !isInt || n < lo || n > hi {
			ps.At(path, key, "%s holds %v, which is not %s; write %s", key, c, what, example)
			return nil, false
		}
		out = append(out, int(n))
	}
	return out, true
}

func (ps *parser) hasGroup(name string) bool { return contains(ps.groupNames(), name) }

func (ps *parser) groupNames() []string {
	var out []string
	for _, g := range ps.p.Groups {
		out = append(out, g.Name)
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func quotedList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}

// GroupSource is Source over one group alone (the experiment's ramp, or its
// control ramp); "" is every group.
func (p *Plan) GroupSource(v *Vars, seed int64, group string) (load.Source, []load.Group, error) {
	if group == "" {
		return p.Source(v, seed)
	}
	q := *p
	q.Groups = nil
	for _, g := range p.Groups {
		if g.Name == group {
			q.Groups = append(q.Groups, g)
		}
	}
	if len(q.Groups) == 0 {
		return nil, nil, fmt.Errorf("the plan has no group %q", group)
	}
	return q.Source(v, seed)
}

// gaugeSource reads one entry of gauges: a URL string, or a table with
// url, metric and quantile (a quantile only beside a metric).
func gaugeSource(v any) (GaugeSource, bool) {
	isURL := func(s string) bool {
		return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
	}
	if s, ok := v.(string); ok {
		return GaugeSource{URL: s}, isURL(s)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return GaugeSource{}, false
	}
	var src GaugeSource
	for k, x := range m {
		switch k {
		case "url":
			src.URL, ok = x.(string)
		case "metric":
			src.Metric, ok = x.(string)
			ok = ok && src.Metric != ""
		case "quantile":
			switch q := x.(type) {
			case float64:
				src.Quantile = q
			case int64:
				src.Quantile = float64(q)
			default:
				ok = false
			}
			ok = ok && src.Quantile > 0 && src.Quantile < 1
		default:
			ok = false
		}
		if !ok {
			return GaugeSource{}, false
		}
	}
	if !isURL(src.URL) || src.Quantile != 0 && src.Metric == "" {
		return GaugeSource{}, false
	}
	return src, true
}
