package experiment_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/experiment/target/targettest"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

const groupTOML = `server_timing = "Server-Timing"

[[group]]
name = "work"
path = "/work"
expect = 200

[[group]]
name = "light"
path = "/light"
expect = 200
`

func parsePlan(t *testing.T, exp string) *plan.Plan {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(groupTOML+"\n[experiment]\n"+exp), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func runExperiment(t *testing.T, p *plan.Plan, url string) *experiment.Report {
	t.Helper()
	return runSpec(t, p, experiment.Spec{Target: url, Shown: url})
}

func runSpec(t *testing.T, p *plan.Plan, spec experiment.Spec) *experiment.Report {
	t.Helper()
	v, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	spec.Plan, spec.Vars, spec.Seed = p, v, 1
	rep, err := experiment.Run(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := experiment.WriteSummary(&b, rep); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + b.String())
	return rep
}

// W/S = 4 / 50 ms = 80 answers/s.
var pool = target.Config{Workers: 4, Service: 50 * time.Millisecond, Queue: 16}

// slowPool serves 40 a second: at 100 ms a request, the 10-20 ms a
// crowded 2-core machine adds to each closed-loop round trip outside the
// pool costs the c = W stage under 10 % of its throughput (at 50 ms it
// cost 14 %, and the knee read 66.7/s for 80).
var slowPool = target.Config{Workers: 4, Service: 100 * time.Millisecond, Queue: 16}

// capacityMet is the pool's capacity as the run met it: W/S on a quiet
// machine, less on a crowded one, where each worker's sleep of S ends
// late. The knee is the pool's capacity when it is within 10 % of this;
// W/S itself is an upper bound no run can beat.
func capacityMet(t *testing.T, s *target.Server, cfg target.Config) float64 {
	t.Helper()
	d := s.Delivered()
	t.Logf("the pool delivered %.1f/s (W/S = %.0f)", d, cfg.Capacity())
	if d <= 0 || d > 1.02*cfg.Capacity() {
		t.Fatalf("the pool delivered %.1f/s, want above 0 and at most W/S = %.0f", d, cfg.Capacity())
	}
	return d
}

// kneeRun runs the experiment of planText against a new pool of cfg. A
// run in which the machine starved the pool itself (its workers' sleeps
// ended over 10 % late on average, so it delivered under 90 % of W/S, or,
// in a closed run, over 20 % late at p95 where nothing queues), or the clients
// (a stage's p95 over the server's by more than a fifth of the service
// time, so the clients' turns, not the pool, set the pace) says nothing
// about the experiment: every stage's latency then holds the scheduler's
// delay, and on a machine's crowded first run the open loop's first stage,
// at half the pool's capacity, was already over the objective. Such a run
// is made again, up to three runs in all, as a gate's retry would; the
// last is judged whatever it met.
func kneeRun(t *testing.T, cfg target.Config, planText string, scrape time.Duration) (*target.Server, *experiment.Report) {
	t.Helper()
	p := parsePlan(t, planText)
	for attempt := 1; ; attempt++ {
		// A knee measured beside four gates' arms, docker and builds in
		// the suite's measured phase starved its pool in all three runs
		// of a rehearsal (p95 at 40/s 125 ms against a 50 ms service, the
		// pool delivering 75.9/s of 80): each run takes one of the gates'
		// slots, so it measures beside three of them at most.
		release := testslot.Hold(t)
		srv, url := targettest.StartServer(t, cfg)
		rep := runSpec(t, p, experiment.Spec{Target: url, Shown: url, ScrapeEvery: scrape})
		release()
		d := srv.Delivered()
		service := float64(cfg.Service.Milliseconds())
		lag := 0.0  // the clients' own share of the answers' time, worst stage
		late := 0.0 // the pool's own p95 where nothing queues, worst stage
		for _, st := range rep.Stages {
			lag = max(lag, st.Derived.DiffMS)
			if rep.Model == "closed" && st.Level <= float64(cfg.Workers) {
				late = max(late, st.Derived.ServerMS)
			}
		}
		// A closed stage of at most W users never queues, so the server's
		// p95 there is the workers' sleep of S. A stall that puts it over
		// the knee's factor (KneeClimb, 1.2) x S hides the knee, which is read from p95
		// climbing by that factor: beside two busy loops a pool of
		// S = 100 ms answered c=4 at a server p95 of 237 ms and c=8 at
		// 205 ms, and the experiment saw no knee (issue 19, run 108),
		// while the mean, and so Delivered, moved under 10 %.
		if d >= 0.9*cfg.Capacity() && lag <= 0.2*service && late <= experiment.KneeClimb*service || attempt == 3 {
			return srv, rep
		}
		testslot.Retry(t, fmt.Sprintf("run %d: the machine starved the pool (it delivered %.1f/s of W/S = %.0f; its p95 where nothing queues %.1f ms for a %.0f ms service) or the clients (up to %.1f ms between the server's p95 and theirs): running again", attempt, d, cfg.Capacity(), late, service, lag))
	}
}

func TestMeasuredClosedLoopKneeIsThePool(t *testing.T) {
	testtier.Heavy(t, testtier.Knee)
	t.Parallel()
	srv, rep := kneeRun(t, slowPool, `model = "closed"
group = "work"
concurrency = [1, 2, 4, 8]
warmup = "200ms"
stage = "1500ms"
gauges = ["/metrics"]
`, 100*time.Millisecond)
	k := rep.Knee
	if k == nil {
		t.Fatalf("no knee; verdict %q", rep.Verdict)
	}
	if want := capacityMet(t, srv, slowPool); k.Throughput < 0.9*want || k.Throughput > 1.1*want {
		t.Errorf("knee %.1f/s at %s, want the pool's %.1f/s within 10 %%", k.Throughput, k.Name, want)
	}
	if k.Level != 4 || k.Attribution != "service" {
		t.Errorf("knee at level %g attributed to the %s, want c=4 and the service", k.Level, k.Attribution)
	}
	if rep.Exit != 0 {
		t.Errorf("exit %d (%s), want 0", rep.Exit, rep.Verdict)
	}
	for _, l := range rep.Little {
		if l.Implied < 0.85*l.Users || l.Implied > 1.1*l.Users {
			t.Errorf("Little's law at %s: throughput x latency = %.2f, want the %g workers", l.Stage, l.Implied, l.Users)
		}
	}
	checkRanOut(t, rep)
}

// checkRanOut asserts the first resource to run out is the pool or its
// queue, never the requests in flight, which follow the load up.
func checkRanOut(t *testing.T, rep *experiment.Report) {
	t.Helper()
	m := rep.RanOut
	if m == nil {
		t.Fatalf("no resource ran out; notes %q", rep.Notes)
	}
	switch m.Gauge {
	case "capacity_pool_in_use", "capacity_queue_length", "capacity_pool_wait_seconds":
	default:
		t.Errorf("first resource to run out %s (%s), want the pool, its queue or its wait", m.Gauge, m.Text)
	}
}

// The knee tests run side by side: each compares its knee with the
// capacity its own pool delivered (capacityMet), which a test beside it
// slows as much as the knee; against W/S a knee measured beside another
// read 60/s for 80.
func TestMeasuredOpenLoopKneeGaugeAndShedding(t *testing.T) {
	testtier.Heavy(t, testtier.Knee)
	t.Parallel()
	// The gauges are scraped every 100 ms, not every second: the claim
	// below orders the pool wait's move before p95's crossing, and at one
	// scrape a second the move was seen up to a second late, after the
	// crossing, on a loaded machine.
	//
	// The objective is 200 ms, four times the service: p95 crosses it only
	// once the queue builds, past the pool's capacity. At 120 ms the claim
	// was a coin toss: at 60/s (three quarters of the pool) p95 is about
	// 110 ms from queueing alone on a quiet machine, and a crowded one
	// (a pool delivering 74/s) put it at 128 ms, a stage before the pool
	// filled.
	const scrape = 100 * time.Millisecond
	srv, rep := kneeRun(t, pool, `model = "open"
group = "work"
rates = [40, 60, 80, 100, 120]
warmup = "500ms"
stage = "1500ms"
objective = "200ms"
gauges = ["/metrics"]
`, scrape)
	k := rep.Knee
	if k == nil {
		t.Fatalf("no knee; verdict %q", rep.Verdict)
	}
	// The open loop offers rates 20/s apart, a quarter of the pool's 80/s:
	// the knee can only be the last rate the pool met, so the claim is at
	// that grid's resolution. The pool's capacity as the run met it lies
	// from the knee's rate to the next one's (10 % either side), and the
	// knee served no more than the pool delivered. On a quiet machine the
	// pool meets 80/s and the knee is 80/s; beside the full suite it met
	// 73.1/s and the knee was, rightly, 60/s.
	met := capacityMet(t, srv, pool)
	next := k.Level
	if k.Stage+1 < len(rep.Stages) {
		next = rep.Stages[k.Stage+1].Level
	}
	if met < 0.9*k.Level || met > 1.1*next || k.Throughput > 1.1*met {
		t.Errorf("knee %.1f/s at %s (next stage %g/s), want the pool's %.1f/s from the knee's rate to the next one's, and no more served", k.Throughput, k.Name, next, met)
	}
	last := rep.Stages[len(rep.Stages)-1].Derived
	if last.Counts || !strings.Contains(strings.Join(last.Flags, ";"), "success gate") {
		t.Errorf("120/s against a queue of 16: success %.3f, flags %q; want the stage under the gate and flagged", last.Success, last.Flags)
	}
	checkRanOut(t, rep)
	m := rep.RanOut
	// What ran out is read across stages (the step from one stage's means
	// to the next's), so the order is claimed at a stage's resolution: the
	// pool ran out in the step into the first stage over the objective, or
	// earlier. Within a stage the order of the gauge's move and p95's
	// crossing is the scheduler's: on a crowded machine (a pool delivering
	// 72/s) the queue left its rest a second after the stage's p95 crossed.
	//
	// Which step that is depends on how it ran out (ranout.go): a gauge
	// that "grew" did so in the step from From into Stage, but a pool that
	// "saturated" was already at its ceiling over From (it had followed
	// the load into From and held there into Stage), so it ran out in the
	// step into From. Counting a saturated pool's step as the one into
	// Stage asked it to be full a whole stage before p95 crossed: a pool
	// of W/S = 80/s that reached its 4 workers at 80/s, the same stage
	// whose p95 crossed, failed so (issue 19's first-run rehearsal).
	into, over := -1, -1
	for i, s := range rep.Stages {
		if s.Name == m.From {
			into = i + 1
			if m.How == "saturated" {
				into = i
			}
		}
		if over < 0 && s.Derived.Objective == "misses" {
			over = i
		}
	}
	if m.LatencyAtS == nil || into < 0 || over < 0 || into > over {
		t.Errorf("%s: want the pool running out in the step into the first stage over the objective (%d), or before; it was the step into %d", m.Text, over, into)
	}
}

func TestMeasuredControlRampTellsPayloadFromConcurrency(t *testing.T) {
	testtier.Heavy(t, testtier.Knee)
	t.Parallel()
	// The light group is served as fast as the pool serves any request, so
	// the control bends at the same level: the pool (concurrency) is the
	// limit. The report must say which.
	//
	// Both knees are read as internal/cli's TestMeasuredExperimentKnees/Command reads its
	// one: 100 ms of service, so a crowded machine's waits for the CPU (20
	// to 60 ms a request at load 10 to 18 on 2 cores, more below the pool's
	// size than above it) cannot make c=4 gain half of c=2's throughput,
	// and the median, since a stage's p95 is its slowest answer or two,
	// which one stall sets. With 40 ms and p95 neither ramp found a knee.
	url := targettest.Start(t, target.Config{Workers: 2, Service: 100 * time.Millisecond})
	p := parsePlan(t, `model = "closed"
group = "work"
control = "light"
latency = "p50"
concurrency = [1, 2, 4]
warmup = "200ms"
stage = "1s"
`)
	rep := runExperiment(t, p, url)
	if rep.Control == nil || len(rep.Control.Stages) != 3 {
		t.Fatalf("control ramp missing: %+v", rep.Control)
	}
	if rep.Knee == nil || rep.Control.Knee == nil || !strings.Contains(rep.Control.Note, "the concurrency, not the payload") {
		t.Errorf("knee %+v, control knee %+v, note %q", rep.Knee, rep.Control.Knee, rep.Control.Note)
	}
}

func TestPlateauMemoryFromTheTargetProcess(t *testing.T) {
	// The target runs in this test's own process: its memory is sampled
	// each second beside the scraped gauges and read for the plateau,
	// which must read the growth, whatever the parallel tests allocate.
	t.Parallel()
	url := targettest.Start(t, target.Config{Workers: 8, Service: time.Millisecond})
	p := parsePlan(t, `model = "open"
warmup = "200ms"
[[experiment.phase]]
name = "plateau"
from = 50
to = 50
duration = "3s"
`)
	rep := runSpec(t, p, experiment.Spec{Target: url, Shown: url, PID: os.Getpid()})
	var rss *experiment.Gauge
	for i, g := range rep.Gauges {
		if strings.HasPrefix(g.Name, "process_rss_bytes") {
			rss = &rep.Gauges[i]
		}
	}
	if rss == nil || len(rss.Samples) < 3 || rss.Samples[0].Value < 1<<20 {
		t.Fatalf("the process's memory was not sampled: %+v", rep.Gauges)
	}
	if len(rep.Phases) != 1 || !strings.Contains(rep.Phases[0].Text, rss.Name+" grew") {
		t.Errorf("the plateau's growth does not read the memory: %+v", rep.Phases)
	}
	if _, ok := rep.Phases[0].GaugeGrowth[rss.Name]; !ok {
		t.Errorf("no growth rate for %s: %+v", rss.Name, rep.Phases[0].GaugeGrowth)
	}
}

func TestHitRatioByHeaderAndJSONField(t *testing.T) {
	t.Parallel()
	// Every fourth answer is a hit: X-Cache: HIT and {"cache":{"hit":true}}.
	for _, tc := range []struct {
		name, rule string
		pad        int
		lo, hi     float64
		flag       string
	}{
		{"header and value", `hit_header = "X-Cache: HIT"`, 0, 0.2, 0.3, "mostly misses"},
		{"header present", `hit_header = "x-cache"`, 0, 1, 1, ""},
		{"JSON field", "hit_field = \"cache.hit\"\nhit_value = true", 0, 0.2, 0.3, "mostly misses"},
		{"JSON field beyond the bound", `hit_field = "cache.hit"`, 70 << 10, 0, 0, "past the first 64 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := targettest.Start(t, target.Config{Workers: 8, Service: time.Millisecond, HitEvery: 4, Pad: tc.pad})
			p := parsePlan(t, "model = \"closed\"\ngroup = \"work\"\nconcurrency = [2]\nwarmup = \"200ms\"\nstage = \"800ms\"\n"+tc.rule+"\n")
			rep := runExperiment(t, p, url)
			if len(rep.Stages) != 1 {
				t.Fatalf("%d stages", len(rep.Stages))
			}
			d := rep.Stages[0].Derived
			if d.HitRatio == nil || *d.HitRatio < tc.lo || *d.HitRatio > tc.hi {
				t.Fatalf("hit ratio %v, want %g..%g", d.HitRatio, tc.lo, tc.hi)
			}
			flags := strings.Join(d.Flags, "; ")
			if tc.flag != "" && !strings.Contains(flags, tc.flag) {
				t.Errorf("flags %q, want %q", flags, tc.flag)
			}
			if tc.flag == "" && strings.Contains(flags, "mostly misses") {
				t.Errorf("flags %q on an all-hit run", flags)
			}
		})
	}
}

// A hit by status is an expected, right answer with that status: the
// target answers 200 to every request but only every fourth body holds
// what the group expects, so the other three are wrong answers, and
// counting the status alone made the hit ratio 4 (400 %).
func TestHitRatioByStatusCountsRightAnswersOnly(t *testing.T) {
	t.Parallel()
	url := targettest.Start(t, target.Config{Workers: 8, Service: time.Millisecond, HitEvery: 4})
	path := filepath.Join(t.TempDir(), "plan.toml")
	if err := os.WriteFile(path, []byte(`[[group]]
name = "work"
path = "/work"
expect = 200
expect_body = '"hit":true'

[experiment]
model = "closed"
group = "work"
concurrency = [2]
warmup = "200ms"
stage = "800ms"
hit_status = [200]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := runExperiment(t, p, url)
	if len(rep.Stages) != 1 {
		t.Fatalf("%d stages", len(rep.Stages))
	}
	st := rep.Stages[0]
	if st.Total.Expected == 0 || st.Total.Expected >= st.Total.Statuses[200] {
		t.Fatalf("%d expected of %d answered 200: the target's misses should be wrong answers", st.Total.Expected, st.Total.Statuses[200])
	}
	if d := st.Derived; d.HitRatio == nil {
		t.Errorf("no hit ratio; want 1")
	} else if *d.HitRatio != 1 {
		t.Errorf("hit ratio %g, want 1: every expected answer is a 200", *d.HitRatio)
	}
}

// The target's served counter and its request-duration histogram, named
// in gauges, are read as a rate per second and as the p99 of each scrape
// interval: in the report beside the plain gauges, and charted.
func TestCounterAndHistogramAsGauges(t *testing.T) {
	t.Parallel()
	url := targettest.Start(t, pool)
	p := parsePlan(t, `model = "closed"
group = "work"
concurrency = [1, 2]
warmup = "200ms"
stage = "1500ms"
gauges = ["/metrics", {url = "/metrics", metric = "capacity_served_total"}, {url = "/metrics", metric = "capacity_request_duration_seconds", quantile = 0.99}]
`)
	rep := runSpec(t, p, experiment.Spec{Target: url, Shown: url, ScrapeEvery: 250 * time.Millisecond})
	byName := map[string]experiment.Gauge{}
	for _, g := range rep.Gauges {
		byName[g.Name] = g
	}
	stage := rep.Stages[1]
	within := func(g experiment.Gauge) []float64 {
		var v []float64
		for _, s := range g.Samples {
			if s.AtS > stage.StartS && s.AtS <= stage.StartS+stage.LengthS {
				v = append(v, s.Value)
			}
		}
		slices.Sort(v)
		return v
	}
	rate, ok := byName["rate(capacity_served_total)"]
	if !ok || rate.Kind != "rate" {
		t.Fatalf("no counter rate among %v", names(rep.Gauges))
	}
	// Two clients against 50 ms of service: about 40 answers a second.
	// A 250 ms scrape interval holds 5-11 of them, so one interval's rate
	// is a count of a few answers and moves by a third with one answer
	// more or less (run 99 read 11 to 44/s in a stage that served 26.7).
	// Weighted by their intervals the rates add up to the counter's
	// increase over the stage, which the scrapes resolve to an answer or
	// two of the stage's 40 or so.
	if v := within(rate); len(v) < 3 {
		t.Errorf("served rate in %s %v: fewer than 3 scrapes", stage.Name, v)
	} else if m := stageMean(rate, stage.StartS, stage.StartS+stage.LengthS); m < 0.75*stage.Derived.Throughput || m > 1.25*stage.Derived.Throughput {
		t.Errorf("served rate in %s %.1f/s on average over the scrapes %v, want about the %.1f/s served", stage.Name, m, v, stage.Derived.Throughput)
	}
	q, ok := byName["histogram_quantile(0.99, capacity_request_duration_seconds)"]
	if !ok || q.Kind != "quantile" {
		t.Fatalf("no histogram quantile among %v", names(rep.Gauges))
	}
	// Under the pool's four workers nothing waits: the p99 is the 50 ms
	// service time, a bucket's width below it and, on a loaded machine
	// whose sleeps overshoot, up to three times it above.
	if v := within(q); len(v) < 3 || v[len(v)/2] < 0.045 || v[len(v)/2] > 0.15 {
		t.Errorf("p99 in %s %v s, want about the 50 ms service time", stage.Name, v)
	}
	if _, ok := byName["capacity_pool_in_use"]; !ok {
		t.Errorf("the plain endpoint's gauges are gone: %v", names(rep.Gauges))
	}
	var page strings.Builder
	if err := experiment.WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	for _, title := range []string{"<title>rate(capacity_served_total)</title>", "<title>histogram_quantile(0.99, capacity_request_duration_seconds)</title>", ">per second</text>"} {
		if !strings.Contains(page.String(), title) {
			t.Errorf("the HTML report has no %s", title)
		}
	}
}

func names(gs []experiment.Gauge) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Name)
	}
	return out
}

// The on-sale chapter's buyers who retry a slow request: every third
// answer of the target is slow, every user retries one slower than
// retry_after, and the report counts the retries apart.
func TestPopulationRetriesInTheReport(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (n.Add(1)-1)%3 == 0 {
			time.Sleep(400 * time.Millisecond) // the slow answer's service time, far past retry_after
		}
	}))
	t.Cleanup(srv.Close)
	p := parsePlan(t, `model = "population"
group = "work"
users = 10
think = "50ms"
warmup = "100ms"
duration = "1s"
retry_share = 1
retry_after = "100ms"
`)
	rep := runExperiment(t, p, srv.URL)
	s, pop := rep.Stages[0], rep.Population
	if s.Retries == 0 || pop == nil || pop.Retries != s.Retries || rep.Settings.Retriers != 10 {
		t.Fatalf("stage retries %d, population %+v, retriers %d: want retries counted by every user", s.Retries, pop, rep.Settings.Retriers)
	}
	if pop.RetryRate != s.Derived.RetryRate || pop.OfferedWithRetries != pop.Offered+pop.RetryRate || pop.RetryRate <= 0 {
		t.Errorf("retry rate %.2f/s (stage %.2f/s), offered %.1f/s, with retries %.1f/s", pop.RetryRate, s.Derived.RetryRate, pop.Offered, pop.OfferedWithRetries)
	}
	// The users waited for the answers they took, not the slow ones they
	// walked away from, which the mean latency counts.
	if pop.WaitMS <= 0 || pop.WaitMS >= s.Derived.MeanMS || s.Actions == 0 {
		t.Errorf("the users waited %.1f ms over %d actions, the mean latency %.1f ms: want a wait under it", pop.WaitMS, s.Actions, s.Derived.MeanMS)
	}
	var sum, page, js strings.Builder
	if err := experiment.WriteSummary(&sum, rep); err != nil {
		t.Fatal(err)
	}
	if err := experiment.WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if err := rep.Write(&js); err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"summary": sum.String(), "HTML": page.String(), "JSON": js.String()} {
		for _, w := range []string{"retries", "offered with them"} {
			if !strings.Contains(text, w) {
				t.Errorf("the %s lacks %q", what, w)
			}
		}
	}
	if !strings.Contains(js.String(), `"offered_with_retries_per_s"`) {
		t.Errorf("the JSON report lacks offered_with_retries_per_s")
	}
}

// stageMean is a rate gauge's mean over the scrape intervals that end
// within [from, to], each weighted by its length: the counter's increase
// over those intervals per second.
func stageMean(g experiment.Gauge, from, to float64) float64 {
	var sum, span float64
	for i := 1; i < len(g.Samples); i++ {
		s := g.Samples[i]
		if s.AtS > from && s.AtS <= to {
			dt := s.AtS - g.Samples[i-1].AtS
			sum += s.Value * dt
			span += dt
		}
	}
	if span == 0 {
		return 0
	}
	return sum / span
}
