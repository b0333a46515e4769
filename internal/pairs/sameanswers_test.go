package pairs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

// With answers = "same", the sample of identical requests goes to both
// arms (real HTTP servers): a head whose body differs from the base's in a
// field the plan does not ignore fails the gate, and the verdict shows both
// bodies; one that differs only in ignored fields (each arm numbers its
// rows and stamps them) passes; answers = "warn" makes the difference a
// note.
func TestSameAnswers(t *testing.T) {
	t.Parallel()
	planText := func(mode string) string {
		return `
[ab]
pairs = 2
warmup = "1s"
measure = "1s"
rate = 20
idle = "0s"
answers = "` + mode + `"
ignore = ["id", "meta.created_at"]

[[group]]
name = "item"
path = "/items/1"
expect = 200
`
	}
	server := func(name string, first int64) (string, *atomic.Int64) {
		var n atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			i := n.Add(1)
			fmt.Fprintf(w, `{"id":%d,"name":%q,"meta":{"created_at":"2026-12-0%d","tags":["a"]}}`, first+i, name, i%9+1)
		}))
		t.Cleanup(srv.Close)
		return srv.URL, &n
	}
	base, sent := server("widget", 0)
	sameHead, _ := server("widget", 1000)
	otherHead, _ := server("gadget", 1000)

	run := func(mode, head string) (*judge.SameAnswers, judge.Verdict) {
		p, err := plan.Parse("plan.toml", []byte(planText(mode)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := compareAnswers(context.Background(), p, nil, 1, Arm{Name: "base", URL: base}, Arm{Name: "head", URL: head})
		if err != nil {
			t.Fatal(err)
		}
		in := aaInput()
		in.Answers = s
		return s, judge.Judge(in)
	}

	s, v := run("same", sameHead)
	if s.Compared != sameAnswersPerGroup || len(s.Differences) != 0 || v.Code != judge.Pass {
		t.Errorf("ignored fields only: compared %d, differences %+v, code %v (failures %q)", s.Compared, s.Differences, v.Code, v.Failures)
	}
	if sent.Load() < sameAnswersPerGroup {
		t.Errorf("the base got %d requests, want the sample of %d", sent.Load(), sameAnswersPerGroup)
	}

	s, v = run("same", otherHead)
	if len(s.Differences) != sameAnswersPerGroup || v.Code != judge.Regression {
		t.Fatalf("a field not ignored: differences %+v, code %v", s.Differences, v.Code)
	}
	fails := strings.Join(v.Failures, "\n")
	for _, want := range []string{
		"answers: the head answered 5 of 5 sampled requests differently from the base (ignoring id, meta.created_at)",
		`answers: group item, GET /items/1: base answered 200 {"id":`,
		`"name":"widget"`, `head answered 200 {"id":10`, `"name":"gadget"`,
	} {
		if !strings.Contains(fails, want) {
			t.Errorf("failures lack %q:\n%s", want, fails)
		}
	}

	_, v = run("warn", otherHead)
	if v.Code != judge.Pass || !strings.Contains(strings.Join(v.Notes, "\n"), "answers: the head answered 5 of 5") {
		t.Errorf("answers = \"warn\": code %v notes %q, want a pass with the difference as a note", v.Code, v.Notes)
	}
}

// aaInput is a passing A/A judge input of one group.
func aaInput() judge.Input {
	in := judge.Input{Metrics: []judge.Metric{{ID: "p50.item", Class: judge.Latency, Unit: "ms"}}}
	for i := range 2 {
		ph := judge.Phase{Pair: i + 1, Lead: [2]string{"base", "head"}[i], Values: map[string]float64{"p50.item": 5},
			Groups: []judge.GroupFigures{{Name: "item", Requests: 20, P50: 5, P99: 9,
				Halves: [2]judge.Half{{P50: 5, P90: 8, Count: 10}, {P50: 5, P90: 8, Count: 10}}}},
			Schedule: judge.Schedule{Offered: 20, Achieved: 20, Intended: 20, Sent: 20, Answered: 20, LatenessP99: 0.2}}
		in.Base, in.Head = append(in.Base, ph), append(in.Head, ph)
	}
	return in
}
