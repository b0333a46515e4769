package pairs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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
	phase := func(pair int, url string) (judge.Phase, error) {
		src, groups, err := p.PairSource(nil, 1, pair, p.AB.Pairs)
		if err != nil {
			return judge.Phase{}, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := load.Run(ctx, load.Attack{Target: url, Source: src, Groups: groups, Pacer: load.ConstantPacer{Freq: p.AB.Rate},
			Warmup: p.AB.Warmup, Duration: p.AB.Measure})
		if err != nil {
			return judge.Phase{}, err
		}
		return phaseFigures(pair, "base", &armRun{groups: groups, res: res}, false), nil
	}
	// The phases of one judgment run at once: what is judged is what the
	// answers said, not how fast they came, and four 1 s phases one after
	// another were most of this test's time (20 answers a second each is
	// no load on any machine).
	judgeArms := func(base, head string) judge.Verdict {
		n := p.AB.Pairs
		phases := make([]judge.Phase, 2*n)
		errs := make([]error, 2*n)
		var wg sync.WaitGroup
		for i := range 2 * n {
			url := base
			if i >= n {
				url = head
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				phases[i], errs[i] = phase(i%n, url)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		in := judge.Input{Base: phases[:n], Head: phases[n:]}
		seen := map[string]bool{}
		for i := range n {
			for id := range in.Base[i].Values {
				_, inHead := in.Head[i].Values[id]
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
