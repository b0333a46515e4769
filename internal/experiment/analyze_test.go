package experiment

import (
	"flag"
	"fmt"
	"maps"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"

	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/experiment/target/targettest"
	"github.com/perfgate/perfgate/internal/load"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/experiment/")

// mkStage builds a measured stage: n answers around latency ms (server ms
// when above zero), and failed more answered with failStatus.
func mkStage(t *testing.T, name string, level, offered float64, n int, latMS, srvMS float64, failed int, failStatus int) Stage {
	t.Helper()
	g := &load.GroupStats{Name: "work", Requests: uint64(n + failed), Expected: uint64(n), Unexpected: uint64(failed),
		Statuses: map[int]uint64{200: uint64(n)}}
	if failed > 0 {
		g.Statuses[failStatus] = uint64(failed)
	}
	g.Latency, g.Service = load.NewHistogram(), load.NewHistogram()
	if srvMS > 0 {
		g.Server = load.NewHistogram()
	}
	for i := 0; i < n; i++ {
		// A spread around latMS: 0.9x to 1.1x.
		v := int64(latMS * 1000 * (0.9 + 0.2*float64(i)/float64(max(n-1, 1))))
		g.Latency.RecordValue(v)
		g.Service.RecordValue(v)
		if srvMS > 0 {
			g.Server.RecordValue(int64(srvMS * 1000))
		}
	}
	lr, err := load.NewReport(load.ReportMeta{}, &load.Result{Groups: []*load.GroupStats{g}})
	if err != nil {
		t.Fatal(err)
	}
	return Stage{Name: name, Level: level, Offered: offered, LengthS: 1, Sent: uint64(n + failed), Completed: uint64(n), Total: lr.Total, Groups: lr.Groups}
}

func rampSettings() Settings {
	return Settings{Percentile: 95, Success: 0.99, KneeTolerance: 0.1, Ramp: true}
}

func TestKneeRule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		stages   func(t *testing.T) []Stage
		knee     string // "" = none
		attrib   string
		exit     int
		verdict  string
		flagWant string
	}{
		{"throughput flat while latency climbs", func(t *testing.T) []Stage {
			return []Stage{mkStage(t, "c=1", 1, 0, 20, 50, 49, 0, 0), mkStage(t, "c=2", 2, 0, 40, 50, 49, 0, 0),
				mkStage(t, "c=4", 4, 0, 80, 51, 50, 0, 0), mkStage(t, "c=8", 8, 0, 80, 102, 101, 0, 0)}
		}, "c=4", "service", 0, "answered", ""},
		{"the next stage sheds", func(t *testing.T) []Stage {
			return []Stage{mkStage(t, "40/s", 40, 40, 40, 50, 0, 0, 0), mkStage(t, "80/s", 80, 80, 79, 60, 0, 0, 0),
				mkStage(t, "120/s", 120, 120, 80, 55, 0, 40, 503)}
		}, "80/s", "service", 0, "answered", "passes on latency while shedding"},
		{"the server stayed flat: the generator's ceiling", func(t *testing.T) []Stage {
			return []Stage{mkStage(t, "c=1", 1, 0, 100, 10, 2, 0, 0), mkStage(t, "c=2", 2, 0, 200, 10, 2, 0, 0),
				mkStage(t, "c=4", 4, 0, 210, 19, 2, 0, 0)}
		}, "c=2", "generator", 0, "answered", ""},
		{"still rising: no knee", func(t *testing.T) []Stage {
			return []Stage{mkStage(t, "c=1", 1, 0, 20, 50, 0, 0, 0), mkStage(t, "c=2", 2, 0, 40, 50, 0, 0, 0)}
		}, "", "", 2, "no knee within the ramp", ""},
		{"the first stage already fails", func(t *testing.T) []Stage {
			return []Stage{mkStage(t, "c=1", 1, 0, 20, 50, 0, 5, 500), mkStage(t, "c=2", 2, 0, 40, 50, 0, 0, 0)}
		}, "", "", 2, "already under the 99 % success gate", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Model: "closed", Settings: rampSettings(), Stages: tc.stages(t)}
			Analyze(r)
			got := ""
			if r.Knee != nil {
				got = r.Knee.Name
			}
			if got != tc.knee || r.Knee != nil && r.Knee.Attribution != tc.attrib {
				t.Errorf("knee %q (%+v), want %q attributed to the %s", got, r.Knee, tc.knee, tc.attrib)
			}
			if r.Exit != tc.exit || !strings.Contains(r.Verdict, tc.verdict) {
				t.Errorf("exit %d %q, want %d %q", r.Exit, r.Verdict, tc.exit, tc.verdict)
			}
			if tc.flagWant != "" {
				var all []string
				for _, s := range r.Stages {
					all = append(all, s.Derived.Flags...)
				}
				if !strings.Contains(strings.Join(all, "|"), tc.flagWant) {
					t.Errorf("flags %q lack %q", all, tc.flagWant)
				}
			}
		})
	}
}

func TestStageFlags(t *testing.T) {
	st := rampSettings()
	st.HitStatus = []int{200}
	stages := []Stage{
		mkStage(t, "100/s", 100, 100, 100, 10, 5, 0, 0),
		mkStage(t, "200/s", 200, 200, 150, 10, 5, 0, 0), // served short, server healthy, nothing failed
	}
	stages[1].Sent = 200
	// Misses: answered 404, which the plan expects but is no hit.
	miss := mkStage(t, "300/s", 300, 300, 300, 10, 5, 0, 0)
	miss.Total.Statuses = map[int]uint64{200: 30, 404: 270}
	miss.Total.Hits = 30 // the engine's count by hit_status (load.HitRule)
	stages = append(stages, miss)
	deriveStages(stages, st)
	if f := strings.Join(stages[1].Derived.Flags, "|"); !strings.Contains(f, "shortfall is the generator's") {
		t.Errorf("200/s flags %q, want the generator's shortfall", f)
	}
	if f := strings.Join(stages[2].Derived.Flags, "|"); !strings.Contains(f, "mostly misses (hit ratio 10 %)") {
		t.Errorf("300/s flags %q, want mostly misses", f)
	}
	if d := stages[0].Derived; d.DiffMS <= 0 || d.ServerMS < 5 || d.ServerMS > 5.01 {
		t.Errorf("client %.1f ms, server %.1f ms, difference %.1f ms", d.LatencyMS, d.ServerMS, d.DiffMS)
	}
}

func TestPopulationTransientFerroFEDsArithmetic(t *testing.T) {
	// 300 users, 30 s think time, 60 s from the first join: 10 rps offered,
	// 12.4 measured (743 requests).
	s := mkStage(t, "300 users", 300, 10, 743, 40, 0, 0, 0)
	s.LengthS = 60
	r := &Report{Model: "population", Stages: []Stage{s},
		Settings: Settings{Percentile: 95, Success: 0.99, Users: 300, ThinkS: 30, JoinsS: 30}}
	Analyze(r)
	p := r.Population
	if p.Offered != 10 || p.Bias != 1.25 || p.ThinkTimes != 2 {
		t.Errorf("offered %.2f, bias %.3f, think times %.1f; want 10, 1.25, 2", p.Offered, p.Bias, p.ThinkTimes)
	}
	if got := p.Expected * p.Bias; got < 12.4*0.99 || got > 12.5*1.01 {
		t.Errorf("the rate the transient predicts %.2f/s, want about 12.4", got)
	}
	for _, w := range []string{"no saturation verdict", "reads about 25 % high", "run for at least 5m0s (10 think times)"} {
		if !strings.Contains(p.Verdict, w) {
			t.Errorf("verdict %q lacks %q", p.Verdict, w)
		}
	}
	if r.Exit != 0 || len(r.Warnings) == 0 {
		t.Errorf("exit %d, warnings %q: a short run still answers on latency, with a warning", r.Exit, r.Warnings)
	}
	// Ten think times after every user joined: a verdict.
	s.LengthS = 300
	s.Completed = 2996 // 300 users / (30 s + 40 ms) over 300 s
	r = &Report{Model: "population", Stages: []Stage{s}, Settings: Settings{Percentile: 95, Success: 0.99, Users: 300, ThinkS: 30, JoinsS: 30, WarmupS: 30}}
	Analyze(r)
	if !strings.HasPrefix(r.Population.Verdict, "kept up") {
		t.Errorf("verdict %q, want kept up", r.Population.Verdict)
	}
}

func TestPopulationRetriesCountedApart(t *testing.T) {
	// 100 users, 10 s think time, 40 ms answers: 9.96 actions/s over
	// 300 s, 2,988 first requests, and 150 retries by the 9 users of 100
	// who drew to retry (retry_share 0.1) an answer slower than 2 s. The
	// users waited 40 ms an action on average (the recorded latencies'
	// mean is the same here; with slow answers walked away from it reads
	// higher, and the prediction would read low).
	mk := func(shard string) *Report {
		s := mkStage(t, "100 users", 100, 10, 3138, 40, 0, 0, 0)
		s.LengthS, s.Retries, s.Actions, s.WaitS = 300, 150, 2988, 2988*0.04
		return &Report{Model: "population", Shard: shard, Stages: []Stage{s}, Settings: Settings{Percentile: 95, Success: 0.99,
			Users: 100, ThinkS: 10, JoinsS: 10, WarmupS: 10, RetryShare: 0.1, RetryAfterS: 2, Retriers: 9}}
	}
	r := mk("")
	Analyze(r)
	p := r.Population
	if p.Retries != 150 || p.RetryRate != 0.5 || p.OfferedWithRetries != 10.5 || p.Retriers != 9 || math.Abs(p.WaitMS-40) > 1e-9 {
		t.Errorf("retries %d at %.2f/s, offered with them %.2f/s, %d retriers, wait %.3f ms; want 150 at 0.5/s, 10.5/s, 9, 40 ms", p.Retries, p.RetryRate, p.OfferedWithRetries, p.Retriers, p.WaitMS)
	}
	// A slow answer the users walked away from raises the mean latency,
	// not their wait: the prediction reads the wait.
	slow := mk("")
	slow.Stages[0].WaitS = 2988 * 0.5
	Analyze(slow)
	if e := slow.Population.Expected; math.Abs(e-100/10.5) > 1e-9 {
		t.Errorf("expected %.3f/s, want users / (think + wait) = %.3f/s", e, 100/10.5)
	}
	// The users' own rate is what was served less the retries: 10.0/s of
	// the 9.96/s predicted, where with them it would read 10.5/s.
	if want := "kept up: 100 users received 10.0/s (their retries' 0.5/s apart) of the 10.0/s users / (think + wait) predicts"; p.Verdict != want {
		t.Errorf("verdict %q, want %q", p.Verdict, want)
	}
	line := "retries: 9 of 100 users retry an answer slower than 2s or failed (retry_share 0.1); they sent 150 retries, 0.5/s, each a request of its own inside sent/s; offered with them 10.5/s (10.0/s users / think + 0.5/s retries); the users waited 40.0 ms an action, the mean latency 40.0 ms counting the answers they walked away from"
	if p.Retry != line {
		t.Errorf("retry line\n %q\nwant\n %q", p.Retry, line)
	}
	if f := strings.Join(r.Stages[0].Derived.Flags, "; "); !strings.Contains(f, "retries: 150 of the sent (0.5/s) are users' retries") {
		t.Errorf("stage flags %q lack the retries", f)
	}
	var sum, page strings.Builder
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sum.String(), line+"\n") || !strings.Contains(page.String(), "<p>retries: 9 of 100 users") {
		t.Errorf("the summary or the HTML lacks the retry line:\n%s", sum.String())
	}
	// Shards add their retries and their retriers.
	m, err := Merge([]*Report{mk("0/2"), mk("1/2")})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Stages[0]; s.Retries != 300 || m.Settings.Retriers != 18 || m.Population.RetryRate != 1 || s.Actions != 2*2988 || math.Abs(m.Population.WaitMS-40) > 1e-9 {
		t.Errorf("merged: %d retries, %d retriers, %.2f/s, %d actions waiting %.1f ms; want 300, 18, 1/s, 5976, 40 ms", s.Retries, m.Settings.Retriers, m.Population.RetryRate, s.Actions, m.Population.WaitMS)
	}
	// Without retry_share nothing about retries is said.
	r = mk("")
	r.Settings.RetryShare, r.Stages[0].Retries = 0, 0
	Analyze(r)
	if r.Population.Retry != "" || strings.Contains(r.Population.Verdict, "retries") {
		t.Errorf("no retries, yet %q / %q", r.Population.Retry, r.Population.Verdict)
	}
}

func TestPreviousKnee(t *testing.T) {
	mk := func(k float64) *Report { return &Report{Settings: rampSettings(), Routine: Routine{Knee: &k}} }
	now, before := mk(3000), mk(4500)
	Compare(now, before, "last-month.json")
	if now.Exit != 1 || now.Verdict != "the knee moved from 4500.0/s to 3000.0/s, down by more than the 10 % tolerance" {
		t.Errorf("exit %d %q", now.Exit, now.Verdict)
	}
	now = mk(4200)
	Compare(now, before, "last-month.json")
	if now.Exit != 0 || now.Previous.Lines[0] != "the knee moved from 4500.0/s to 4200.0/s" {
		t.Errorf("within tolerance: exit %d %q", now.Exit, now.Previous.Lines)
	}
}

func TestMergeIsExact(t *testing.T) {
	a := &Report{Version: Version, Kind: Kind, Model: "open", Shard: "0/2", Settings: rampSettings(),
		Stages: []Stage{mkStage(t, "100/s", 100, 50, 50, 10, 0, 0, 0), mkStage(t, "200/s", 200, 100, 100, 12, 0, 0, 0)}}
	b := &Report{Version: Version, Kind: Kind, Model: "open", Shard: "1/2", Settings: rampSettings(),
		Stages: []Stage{mkStage(t, "100/s", 100, 50, 50, 30, 0, 0, 0), mkStage(t, "200/s", 200, 100, 100, 36, 0, 0, 0)}}
	m, err := Merge([]*Report{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range m.Stages {
		union := load.Merge([]*load.GroupStats{toStats(t, a.Stages[i].Total), toStats(t, b.Stages[i].Total)})
		for _, p := range []float64{50, 90, 99, 100} {
			if got, want := load.NearestRank(hist(s.Total.Latency), p), union.Percentile(p); got != want {
				t.Errorf("stage %s p%g: merged %s, union %s", s.Name, p, got, want)
			}
		}
		if s.Offered != a.Stages[i].Offered*2 || s.Completed != a.Stages[i].Completed*2 {
			t.Errorf("stage %s: offered %.0f, completed %d", s.Name, s.Offered, s.Completed)
		}
	}
	if _, err := Merge([]*Report{a, a}); err == nil || !strings.Contains(err.Error(), "shard 0/2 given twice") {
		t.Errorf("merging a shard with itself: %v", err)
	}
}

func toStats(t *testing.T, g load.GroupReport) *load.GroupStats {
	t.Helper()
	r, err := (&load.Report{Groups: []load.GroupReport{g}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	return r.Groups[0]
}

// onSale is a synthetic ramp, plateau, spike and recovery whose pool-wait
// gauge leaves zero well before p95 crosses the objective.
func onSale(t *testing.T) *Report {
	st := rampSettings()
	st.ObjectiveMS = 100
	r := &Report{Version: Version, Kind: Kind, Model: "open", Target: "http://127.0.0.1:8080", Plan: "perf/plan.toml",
		Started: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Settings: st}
	add := func(name, phase, kind string, level float64, n int, lat float64, start float64, failed int) {
		s := mkStage(t, name, level, level, n, lat, 0, failed, 503)
		s.Phase, s.PhaseKind, s.StartS, s.LengthS = phase, kind, start, 10
		s.Completed, s.Sent = uint64(n*10), uint64(level*10) // open loop: every arrival goes out
		r.Stages = append(r.Stages, s)
	}
	add("ramp 1/3", "ramp", "ramp", 100, 100, 20, 0, 0)
	add("ramp 2/3", "ramp", "ramp", 200, 200, 21, 10, 0)
	add("ramp 3/3", "ramp", "ramp", 300, 210, 60, 20, 0)
	add("plateau", "plateau", "plateau", 300, 210, 60, 30, 0)
	add("spike", "spike", "spike", 600, 220, 400, 40, 300)
	add("recovery", "recovery", "recovery", 300, 210, 62, 50, 0)
	for s := 0; s < 60; s++ {
		p95 := 22.0
		switch {
		case s >= 20 && s < 40:
			p95 = 60 + 0.5*float64(s-30) // the plateau drifts 30 ms a minute
		case s >= 40 && s < 50:
			p95 = 400
		case s >= 50 && s < 54:
			p95 = 200
		case s >= 54:
			p95 = 63
		}
		r.Series = append(r.Series, Point{AtS: float64(s), Stage: stageAt(r.Stages, float64(s)), Done: 100, P50MS: p95 / 2, P95MS: p95, P99MS: p95 * 1.2})
	}
	wait := Gauge{Endpoint: "http://127.0.0.1:8080/metrics", Name: "pool_wait_seconds"}
	mem := Gauge{Endpoint: "http://127.0.0.1:8080/metrics", Name: `process_resident_memory_bytes{instance="api-01"}`}
	for s := 0; s < 60; s++ {
		w := 0.0
		if s >= 18 {
			w = 0.2
		}
		wait.Samples = append(wait.Samples, GaugeSample{AtS: float64(s), Value: w})
		mem.Samples = append(mem.Samples, GaugeSample{AtS: float64(s), Value: 100e6 + 4e6/60*float64(s)})
	}
	r.Gauges = []Gauge{wait, mem}
	Analyze(r)
	return r
}

func TestOnSaleFigures(t *testing.T) {
	r := onSale(t)
	if r.Knee == nil || r.Knee.Name != "ramp 2/3" {
		t.Errorf("knee %+v, want ramp 2/3", r.Knee)
	}
	m := r.RanOut
	if m == nil || m.Gauge != "pool_wait_seconds" || m.AtS != 18 || m.LatencyAtS == nil || *m.LatencyAtS != 40 {
		t.Fatalf("first moved %+v", m)
	}
	if g := r.Routine.PlateauGrowth; g == nil || *g < 29 || *g > 31 {
		t.Errorf("plateau growth %v ms/min, want 30", g)
	}
	if g := r.Phases[0].GaugeGrowth[`process_resident_memory_bytes{instance="api-01"}`]; g < 3.9e6 || g > 4.1e6 {
		t.Errorf("memory growth %.0f bytes/min, want 4 MB", g)
	}
	if rec := r.Routine.RecoveryS; rec == nil || *rec != 4 {
		t.Errorf("recovery %v s, want 4 (p95 back within 10 %% of the plateau's at 54 s)", rec)
	}
}

func TestReportGolden(t *testing.T) {
	r := onSale(t)
	var sum strings.Builder
	if err := WriteSummary(&sum, r); err != nil {
		t.Fatal(err)
	}
	var page strings.Builder
	if err := WriteHTML(&page, r); err != nil {
		t.Fatal(err)
	}
	for _, g := range []struct{ file, got string }{{"summary.golden", sum.String()}, {"report.golden.html", page.String()}} {
		path := filepath.Join("..", "..", "testdata", "experiment", g.file)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(g.got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./internal/experiment -run Golden -update)", err)
		}
		if string(want) != g.got {
			t.Errorf("%s differs from the golden file; run with -update and review the diff:\n%s", g.file, g.got)
		}
	}
}

func TestParseGauges(t *testing.T) {
	// Listed out of name order, with a counter, a histogram and a NaN gauge
	// that are all skipped.
	text := `# HELP queue_age_seconds Oldest item.
# TYPE queue_age_seconds gauge
queue_age_seconds{shard="1",queue="outbox"} 3.5 1700000000000
# HELP pool_wait_seconds Mean wait.
# TYPE pool_wait_seconds gauge
pool_wait_seconds 0.25
# TYPE requests_total counter
requests_total 1027
untyped_thing 7
# TYPE broken_gauge gauge
broken_gauge NaN
# TYPE latency histogram
latency_bucket{le="0.1"} 3
latency_bucket{le="+Inf"} 3
latency_sum 0.2
latency_count 3
`
	want := []sample{{"pool_wait_seconds", 0.25, ""}, {`queue_age_seconds{queue="outbox", shard="1"}`, 3.5, ""}, {"untyped_thing", 7, ""}}
	// The text format, and an endpoint whose Content-Type expfmt does not
	// know, which is read as text.
	for _, format := range []expfmt.Format{expfmt.FmtText, expfmt.FmtUnknown} {
		got, err := parseGauges(strings.NewReader(text), format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", format, got, want)
		}
	}
	if _, err := parseGauges(strings.NewReader("broken{a=\"b\" 1\n"), expfmt.FmtText); err == nil {
		t.Error("unclosed labels: want an error")
	}

	// The capacity target answers the scraper's Accept with delimited
	// protobuf; its four gauges come back by name, its counters skipped.
	url := targettest.Start(t, target.Config{Workers: 2, Service: time.Millisecond})
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	req.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	format := expfmt.ResponseFormat(resp.Header)
	if format.FormatType() != expfmt.TypeProtoDelim {
		t.Errorf("the target answered %q (%s), want delimited protobuf", resp.Header.Get("Content-Type"), format)
	}
	got, err := parseGauges(resp.Body, format)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range got {
		names = append(names, g.name)
	}
	if w := []string{"capacity_in_flight", "capacity_pool_in_use", "capacity_pool_wait_seconds", "capacity_queue_length"}; !slices.Equal(names, w) {
		t.Errorf("the target's gauges %v, want %v", names, w)
	}
}

func TestRanOutReadsAcrossStages(t *testing.T) {
	// Four stages of 10 s, one gauge sample a second at each stage's mean.
	// Closed: the load doubles, throughput follows to c=4 and then holds
	// (a pool of 4). Open: the rate climbs past the same pool.
	closed := struct{ levels, tput []float64 }{[]float64{1, 2, 4, 8}, []float64{20, 40, 78, 80}}
	open := struct{ levels, tput []float64 }{[]float64{40, 60, 80, 100}, []float64{40, 60, 79, 80}}
	for _, tc := range []struct {
		name          string
		levels, tput  []float64
		gauges        map[string][]float64
		want, wantHow string
	}{
		{"closed: the pool saturates, in flight follows", closed.levels, closed.tput, map[string][]float64{
			"in_flight": {1, 2, 4, 8}, "pool_in_use": {1, 2, 4, 4}, "queue_length": {0, 0, 0, 4}}, "pool_in_use", "saturated"},
		{"closed without a pool gauge: the queue grows", closed.levels, closed.tput, map[string][]float64{
			"in_flight": {1, 2, 4, 8}, "queue_length": {0, 0, 0.05, 4}}, "queue_length", "grew"},
		{"open: the queue outgrows in flight", open.levels, open.tput, map[string][]float64{
			"in_flight": {2, 3, 4.5, 20}, "queue_length": {0, 0, 0.5, 16}}, "queue_length", "grew"},
		{"open: the pool fills first", open.levels, open.tput, map[string][]float64{
			"in_flight": {2, 3, 4.5, 20}, "pool_in_use": {2, 3, 3.9, 4}, "queue_length": {0, 0, 0.5, 16}}, "pool_in_use", "saturated"},
		{"in flight alone runs out of nothing", closed.levels, closed.tput, map[string][]float64{"in_flight": {1, 2, 4, 8}}, "", ""},
		{"memory creeping is not growth", open.levels, open.tput, map[string][]float64{"rss": {100, 101, 102, 103}}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Report{Model: "closed"}
			for i, l := range tc.levels {
				r.Stages = append(r.Stages, Stage{Name: fmt.Sprintf("s%d", i), Level: l, StartS: float64(10 * i), LengthS: 10,
					Derived: StageFigures{Throughput: tc.tput[i]}})
			}
			for _, name := range slices.Sorted(maps.Keys(tc.gauges)) {
				g := Gauge{Endpoint: "/metrics", Name: name}
				for i, v := range tc.gauges[name] {
					for s := 0; s < 10; s++ {
						g.Samples = append(g.Samples, GaugeSample{AtS: float64(10*i) + float64(s) + 0.5, Value: v})
					}
				}
				r.Gauges = append(r.Gauges, g)
			}
			gauges(r)
			got, how := "", ""
			if r.RanOut != nil {
				got, how = r.RanOut.Gauge, r.RanOut.How
			}
			if got != tc.want || how != tc.wantHow {
				t.Errorf("ran out %q (%s), want %q (%s); %+v", got, how, tc.want, tc.wantHow, r.RanOut)
			}
			if tc.want == "" && !strings.Contains(strings.Join(r.Notes, ";"), "no gauge ran out") {
				t.Errorf("notes %q, want the no-gauge note", r.Notes)
			}
		})
	}
}

func TestCounterRateAndIntervalQuantile(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		before, now, seconds float64
		want                 float64
	}{
		{"rising", 100, 150, 0.5, 100},
		{"still", 7, 7, 1, 0},
		{"restarted counts from zero", 1000, 30, 2, 15},
	} {
		if got := counterRate(tc.before, tc.now, tc.seconds); got != tc.want {
			t.Errorf("%s: rate %g, want %g", tc.name, got, tc.want)
		}
	}
	inf := math.Inf(1)
	uppers := []float64{0.01, 0.1, 1, inf}
	for _, tc := range []struct {
		name       string
		prev, now  []float64 // cumulative counts, +Inf last
		q, want    float64
		wantSample bool
	}{
		// Between the scrapes 100 observations: 50 under 10 ms, 40 in
		// 10-100 ms, 10 in 100 ms-1 s. p99 is 9/10 into the last bucket.
		{"the interval's own observations", []float64{1000, 1000, 1000, 1000}, []float64{1050, 1090, 1100, 1100}, 0.99, 0.91, true},
		{"the median inside the first bucket", []float64{0, 0, 0, 0}, []float64{50, 90, 100, 100}, 0.5, 0.01, true},
		{"past the last finite bound", []float64{0, 0, 0, 0}, []float64{0, 0, 90, 100}, 0.99, 1, true},
		{"nothing observed in between", []float64{5, 5, 5, 5}, []float64{5, 5, 5, 5}, 0.99, 0, false},
		{"a restarted histogram counts from zero", []float64{500, 500, 500, 500}, []float64{0, 10, 10, 10}, 0.5, 0.055, true},
	} {
		got, ok := intervalQuantile(tc.q, prevRead{uppers: uppers, counts: tc.prev}, uppers, tc.now)
		if ok != tc.wantSample || math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: quantile %g (%v), want %g (%v)", tc.name, got, ok, tc.want, tc.wantSample)
		}
	}
}

func TestSpikeNotRecoveredFails(t *testing.T) {
	never := func(r *Report) {
		for i := range r.Series {
			if r.Series[i].AtS >= 40 {
				r.Series[i].P95MS = 400
			}
		}
	}
	for _, tc := range []struct {
		name     string
		change   func(r *Report)
		exit     int
		says     string
		warnOnly bool
	}{
		{"back in 4 s within the 10 s recovery phase", func(*Report) {}, 0, "back within 10 % of the plateau's 62.5 ms 4 s after", false},
		{"back in 4 s, past recovery = 3s", func(r *Report) { r.Settings.RecoveryS = 3 }, 1, "only 4 s after the spike ended, past recovery = 3s", false},
		{"never back within the recovery phase", never, 1, `did not come back within 10 % of the plateau's 62.5 ms within the 10 s recovery phase "recovery"`, false},
		{"never back, no recovery phase: a warning", func(r *Report) {
			never(r)
			r.Stages = r.Stages[:len(r.Stages)-1]
		}, 0, "before the run ended", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := onSale(t)
			tc.change(r)
			Analyze(r)
			var spike *PhaseFigures
			for i := range r.Phases {
				if r.Phases[i].Kind == "spike" {
					spike = &r.Phases[i]
				}
			}
			if spike == nil || !strings.Contains(spike.Text, tc.says) || spike.Failed != (tc.exit == 1) {
				t.Fatalf("spike %+v, want %q", spike, tc.says)
			}
			if r.Exit != tc.exit || tc.exit == 1 && r.Verdict != spike.Text {
				t.Errorf("exit %d (%s), want %d", r.Exit, r.Verdict, tc.exit)
			}
			if warned := strings.Contains(strings.Join(r.Warnings, ";"), spike.Text); warned != tc.warnOnly {
				t.Errorf("warnings %q", r.Warnings)
			}
		})
	}
}

// One slow second inside a stage that met the objective (a pause of a
// crowded machine) is not where p95 crossed it: the crossing is the first
// second over it from the first stage over it as a whole.
func TestOneSlowSecondIsNotTheCrossing(t *testing.T) {
	r := onSale(t)
	r.Series[2].P95MS = 150 // ramp 1/3, whose p95 is 20 ms against 100
	r.RanOut = nil
	gauges(r)
	if m := r.RanOut; m == nil || m.LatencyAtS == nil || *m.LatencyAtS != 40 || !strings.Contains(m.Text, "22 s before p95 crossed the objective") {
		t.Fatalf("ran out %+v, want p95 crossing at 40 s (the spike, the first stage over the objective), 22 s after the pool wait moved", m)
	}
}
