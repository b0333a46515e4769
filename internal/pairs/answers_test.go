package pairs

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// A head that answers 200 with {} where the plan's group expects
// "items.0.id" = 42 fails the gate naming the group, the path and the
// body, though it is as fast as the base; a base that does leaves the gate
// unable to judge. Real attacks against real HTTP servers, turned into
// the judge's figures the way Run does.
func TestWrongAnswersReachTheJudge(t *testing.T) {
	t.Parallel()
	const planText = `
[ab]
pairs = 2
warmup = "100ms"
measure = "1s"
rate = 20
idle = "0s"

[[group]]
name = "items"
path = "/items"
expect = 200
expect_json = { "items.0.id" = 42 }
`
	p, err := plan.Parse("plan.toml", []byte(planText))
	if err != nil {
		t.Fatal(err)
	}
	server := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	right, empty := server(`{"items":[{"id":42}]}`), server(`{}`)
	phase := func(pair int, url string) judge.Phase {
		src, groups, err := p.PairSource(nil, 1, pair, p.AB.Pairs)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := load.Run(ctx, load.Attack{Target: url, Source: src, Groups: groups, Pacer: load.ConstantPacer{Freq: p.AB.Rate},
			Warmup: p.AB.Warmup, Duration: p.AB.Measure})
		if err != nil {
			t.Fatal(err)
		}
		return phaseFigures(pair, "base", &armRun{groups: groups, res: res}, false)
	}
	judgeArms := func(base, head string) judge.Verdict {
		in := judge.Input{}
		seen := map[string]bool{}
		for i := range p.AB.Pairs {
			b, h := phase(i, base), phase(i, head)
			in.Base, in.Head = append(in.Base, b), append(in.Head, h)
			for id := range b.Values {
				_, inHead := h.Values[id]
				seen[id] = inHead
			}
		}
		in.Metrics = metricList(p, seen)
		return judge.Judge(in)
	}
	const says = `group items: 40 wrong answers; first: expect_json "items.0.id" = 42: the body has no "items"; body (200): {}`

	v := judgeArms(right, empty)
	if v.Code != judge.Regression || !strings.Contains(strings.Join(v.Failures, "\n"), "head: "+says) {
		t.Errorf("a head answering {}: code %v failures %q cannot judge %q, want a regression naming the group, the path and the body", v.Code, v.Failures, v.CannotJudge)
	}
	v = judgeArms(empty, right)
	if v.Code != judge.CannotJudge || !strings.Contains(strings.Join(v.CannotJudge, "\n"), "base: "+says) {
		t.Errorf("a base answering {}: code %v failures %q cannot judge %q, want cannot judge naming the base's wrong answers", v.Code, v.Failures, v.CannotJudge)
	}
}
