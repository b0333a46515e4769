package load_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// fixedResult is a result with known contents, so its report is stable.
func fixedResult() *load.Result {
	r := &load.Result{Start: time.Date(2026, 11, 30, 1, 2, 3, 0, time.UTC), Measured: 10 * time.Second}
	for h := 0; h < 2; h++ {
		search := &load.GroupStats{Name: "search", Latency: load.NewHistogram(), Service: load.NewHistogram(), Server: load.NewHistogram(),
			Statuses: map[int]uint64{200: 95, 503: 5}, Errors: map[string]uint64{"timeout": 1}, BytesIn: 101000, BytesOut: 9000}
		search.Requests, search.Expected, search.Unexpected = 101, 95, 5
		for i := int64(0); i < 95; i++ {
			search.Latency.RecordValue(1000 + i*100 + int64(h))
			search.Service.RecordValue(900 + i*100)
			search.Server.RecordValue(500 + i*50)
		}
		item := &load.GroupStats{Name: "item", Latency: load.NewHistogram(), Service: load.NewHistogram(),
			Statuses: map[int]uint64{200: 100}, BytesIn: 50000, BytesOut: 8000, Requests: 100, Expected: 100}
		for i := int64(0); i < 100; i++ {
			item.Latency.RecordValue(2000 + i*10)
			item.Service.RecordValue(1900 + i*10)
		}
		r.Halves[h] = []*load.GroupStats{search, item}
	}
	for i := range r.Halves[0] {
		r.Groups = append(r.Groups, load.Merge([]*load.GroupStats{r.Halves[0][i], r.Halves[1][i]}))
	}
	r.Schedule = load.Schedule{Offered: 40, Achieved: 39.9, Intended: 400, Sent: 399, Late: 2, Dropped: 1, Lateness: load.NewHistogram()}
	for i := int64(0); i < 399; i++ {
		r.Schedule.Lateness.RecordValue(20 + i%50)
	}
	r.Schedule.Lateness.RecordValue(1500)
	return r
}

func TestReportGolden(t *testing.T) {
	meta := load.ReportMeta{Target: "http://127.0.0.1:8080", Plan: "perf/plan.toml", Warmup: 2 * time.Second}
	rep, err := load.NewReport(meta, fixedResult())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "report.golden.json")
	if *update {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("reading %s (run go test -update to write it): %v", golden, err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("report differs from %s (run go test ./internal/load -run Golden -update if the change is meant):\n%s", golden, buf.String())
	}

	// The report reads back to the same figures.
	back, err := load.ReadReport(bytes.NewReader(want))
	if err != nil {
		t.Fatal(err)
	}
	r, err := back.Result()
	if err != nil {
		t.Fatal(err)
	}
	orig := fixedResult()
	for i, g := range r.Groups {
		o := orig.Groups[i]
		for _, p := range []float64{50, 90, 99, 100} {
			if g.Percentile(p) != o.Percentile(p) {
				t.Errorf("group %s p%v after a round trip = %v, want %v", g.Name, p, g.Percentile(p), o.Percentile(p))
			}
		}
		if g.Requests != o.Requests || g.Statuses[503] != o.Statuses[503] || g.Errors["timeout"] != o.Errors["timeout"] {
			t.Errorf("group %s counts after a round trip = %+v, want %+v", g.Name, g, o)
		}
	}
	if load.NearestRank(r.Schedule.Lateness, 100) != 1500*time.Microsecond || r.Schedule.Dropped != 1 {
		t.Errorf("schedule after a round trip = %+v", r.Schedule)
	}
	if len(r.Halves[1]) != 2 || r.Halves[1][0].Requests != 101 {
		t.Errorf("halves after a round trip = %+v", r.Halves)
	}
}

func TestReadReportRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"version": 2, "kind": "perfgate.load"}`, "version 2"},
		{`{"version": 1, "kind": "something.else"}`, "kind"},
		{`{"version": `, "reading a load report"},
	} {
		if _, err := load.ReadReport(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadReport(%s) = %v, want an error about %q", tc.in, err, tc.want)
		}
	}
}

func TestSummaryAndProgress(t *testing.T) {
	var b strings.Builder
	if err := load.WriteSummary(&b, load.ReportMeta{Target: "http://127.0.0.1:8080", Warmup: 2 * time.Second}, fixedResult()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"offered 40.0/s, achieved 39.9/s", "1 dropped", "WARNING: 1 arrivals", "search", "item", "total",
		"search: 12 failed (10 unexpected status, 2 errors)", "10 x status 503", "2 x timeout"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	line := load.FormatProgress(load.Snapshot{Elapsed: 12 * time.Second, Rate: 1998, P50: 1200 * time.Microsecond, P99: 45 * time.Millisecond, Failures: 3})
	for _, want := range []string{"12.0s", "measured", "1998.0 req/s", "p50   1.20ms", "p99   45.0ms", "failures 3", "dropped 0"} {
		if !strings.Contains(line, want) {
			t.Errorf("progress line %q lacks %q", line, want)
		}
	}
}
