package load_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// TestWrongAnswers: a target that answers 200 with {} where the plan
// expects "items.0.id" = 42 has answered wrong every time: no success, no
// latency recorded, and the sample names the path and shows the body. The
// same rule against a right answer counts none. Both engines read bodies
// for it.
func TestWrongAnswers(t *testing.T) {
	t.Parallel()
	bothEngines(t, testWrongAnswers)
}

func testWrongAnswers(t *testing.T) {
	t.Parallel()
	rule := &load.AnswerRule{JSON: []load.JSONExpect{{Path: "items.0.id", Value: int64(42)}}}
	for _, tc := range []struct {
		name  string
		body  string
		wrong bool
	}{
		{"empty object", `{}`, true},
		{"right answer", `{"items":[{"id":42,"name":"widget"}]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tc.body)
			})
			src, groups := getSource("items", "plain")
			groups[0].Answer = rule
			r := run(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Pacer: load.ConstantPacer{Freq: 100},
				Warmup: 100 * time.Millisecond, Duration: 500 * time.Millisecond, Engine: engineOf(t)})
			g, plain := r.Groups[0], r.Groups[1]
			if plain.WrongAnswers != 0 || plain.Expected != plain.Requests {
				t.Errorf("a group without a rule: %d wrong of %d, %d expected", plain.WrongAnswers, plain.Requests, plain.Expected)
			}
			if !tc.wrong {
				if g.WrongAnswers != 0 || g.Expected != g.Requests || g.WrongAnswer != nil {
					t.Errorf("right answers: %d wrong, %d expected of %d, sample %+v", g.WrongAnswers, g.Expected, g.Requests, g.WrongAnswer)
				}
				return
			}
			if g.Requests == 0 || g.WrongAnswers != g.Requests || g.Expected != 0 || g.Latency != nil {
				t.Fatalf("wrong answers %d of %d, expected %d, latency %v: every answer is wrong and none a success",
					g.WrongAnswers, g.Requests, g.Expected, g.Latency)
			}
			if g.Failures() != g.Requests || g.Unexpected != 0 {
				t.Errorf("failures %d unexpected %d of %d: a wrong answer is a failure, not a wrong status", g.Failures(), g.Unexpected, g.Requests)
			}
			s := g.WrongAnswer
			if s == nil || s.Expectation != `expect_json "items.0.id" = 42` || s.Body != "{}" || !strings.Contains(s.Why, `"items"`) {
				t.Fatalf("sample %+v, want the expectation, the missing path and the body {}", s)
			}
			var sum strings.Builder
			if err := load.WriteSummary(&sum, load.ReportMeta{Target: srv.URL}, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(sum.String(), fmt.Sprintf("items: %d failed (0 unexpected status, %d wrong answers, 0 errors)", g.Requests, g.Requests)) {
				t.Errorf("summary does not name the wrong answers:\n%s", sum.String())
			}
			rep, err := load.NewReport(load.ReportMeta{Target: srv.URL}, r)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Groups[0].WrongAnswers != g.WrongAnswers || rep.Groups[0].WrongAnswer == nil || rep.Total.WrongAnswers != g.WrongAnswers {
				t.Errorf("report: %+v", rep.Groups[0])
			}
			back, err := rep.Result()
			if err != nil {
				t.Fatal(err)
			}
			if bg := back.Groups[0]; bg.WrongAnswers != g.WrongAnswers || bg.WrongAnswer == nil || *bg.WrongAnswer != *s {
				t.Errorf("the report read back: %d wrong answers, sample %+v", bg.WrongAnswers, bg.WrongAnswer)
			}
		})
	}
}
