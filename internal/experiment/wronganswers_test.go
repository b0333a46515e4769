package experiment_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/load"
)

// wrongAnswerPlan is secretPlan without its gauges: it expects "ok":true
// in the body and sends a declared secret, which the target echoes in its
// wrong answers.
var wrongAnswerPlan = strings.Replace(secretPlan, "gauges = [\"/metrics\", \"/missing\"]\n", "", 1)

// A service that answers 200 with an error body fails the experiment's
// step as a wrong status would: the step's group carries the load
// report's wrong_answers and its first wrong_answer (the body with the
// plan's secret masked), the step is under the success gate, and the
// summary and the HTML report name the group's wrong answers. Before,
// the step's group had the count but no sample, and nothing the
// experiment printed said the answers were wrong.
func TestExperimentStepCarriesItsWrongAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		wrongEvery int64 // every n-th answer is wrong; 0: none is
	}{
		{"every third answer wrong", 3},
		{"every answer right", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.wrongEvery > 0 && n.Add(1)%tc.wrongEvery == 0 {
					fmt.Fprintf(w, `{"ok":false,"seen":%q}`, r.Header.Get("Authorization"))
					return
				}
				fmt.Fprint(w, `{"ok":true}`)
			}))
			t.Cleanup(srv.Close)
			dir := t.TempDir()
			planPath, out, htmlOut := filepath.Join(dir, "plan.toml"), filepath.Join(dir, "exp.json"), filepath.Join(dir, "exp.html")
			if err := os.WriteFile(planPath, []byte(wrongAnswerPlan), 0o644); err != nil {
				t.Fatal(err)
			}
			var stdout bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			t.Cleanup(cancel)
			// One stage of a closed ramp is exit 2 whatever it met (no
			// knee, or under the success gate): the report is what is read.
			runErr := experiment.RunPlan(ctx, experiment.PlanOptions{Plan: planPath, Target: srv.URL, Out: out, HTML: htmlOut,
				Seed: 1, Vars: []string{"api_token=" + secretToken}, Stdout: &stdout})
			rep, err := experiment.ReadFile(out)
			if err != nil {
				t.Fatalf("%v (the run: %v)", err, runErr)
			}
			if len(rep.Stages) != 1 || len(rep.Stages[0].Groups) != 1 {
				t.Fatalf("%d stages, want one with one group", len(rep.Stages))
			}
			st := rep.Stages[0]
			g, d := st.Groups[0], st.Derived
			summary := stdout.String()
			t.Log("\n" + summary)
			htmlText, _ := os.ReadFile(htmlOut)
			if g.Requests == 0 || g.Expected+g.WrongAnswers != g.Statuses[200] || g.Unexpected != 0 {
				t.Fatalf("%d requests, %d expected, %d wrong answers, statuses %v: every answer is a 200, right or wrong",
					g.Requests, g.Expected, g.WrongAnswers, g.Statuses)
			}
			if d.Success != float64(g.Expected)/float64(g.Requests) {
				t.Errorf("success %g, want expected / requests = %d / %d: a wrong answer fails as a wrong status does", d.Success, g.Expected, g.Requests)
			}
			if tc.wrongEvery == 0 {
				if g.WrongAnswers != 0 || g.WrongAnswer != nil || strings.Contains(summary, "wrong answer") {
					t.Errorf("right answers: %d wrong, sample %+v, summary:\n%s", g.WrongAnswers, g.WrongAnswer, summary)
				}
				return
			}
			if g.WrongAnswers == 0 || d.Counts {
				t.Fatalf("%d wrong answers of %d, counts toward capacity %v: a third of the answers were wrong", g.WrongAnswers, g.Requests, d.Counts)
			}
			want := load.AnswerSample{Expectation: `expect_body "\"ok\":true"`, Why: "the body does not contain it", Status: 200,
				Body: `{"ok":false,"seen":"Bearer ***"}`}
			for what, s := range map[string]*load.AnswerSample{"the group's": g.WrongAnswer, "the stage total's": st.Total.WrongAnswer} {
				if s == nil || *s != want {
					t.Errorf("%s wrong_answer %+v, want %+v", what, s, want)
				}
			}
			if st.Total.WrongAnswers != g.WrongAnswers {
				t.Errorf("the stage total has %d wrong answers, its group %d", st.Total.WrongAnswers, g.WrongAnswers)
			}
			flag := load.WrongAnswerLine("work", g.WrongAnswers, nil)
			if !strings.Contains(strings.Join(d.Flags, "; "), flag) {
				t.Errorf("flags %q, want %q", d.Flags, flag)
			}
			line := load.WrongAnswerLine("work", g.WrongAnswers, &want)
			for what, text := range map[string]string{"the summary": summary, "the HTML report": string(htmlText)} {
				if !strings.Contains(text, flag) {
					t.Errorf("%s does not name the stage's wrong answers (%q):\n%s", what, flag, text)
				}
			}
			if !strings.Contains(summary, line) {
				t.Errorf("the summary does not show the first wrong answer (%q):\n%s", line, summary)
			}
			jsonText, _ := os.ReadFile(out)
			if !strings.Contains(string(jsonText), `"wrong_answers": `) || !strings.Contains(string(jsonText), `"wrong_answer": {`) {
				t.Errorf("the JSON report lacks the load report's wrong_answers and wrong_answer")
			}
			for what, text := range map[string]string{"the JSON report": string(jsonText), "the HTML report": string(htmlText), "the summary": summary} {
				if strings.Contains(text, secretToken) {
					t.Errorf("%s holds the secret", what)
				}
			}
		})
	}
}
