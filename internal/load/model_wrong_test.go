package load_test

import (
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/loadtest"
)

// TestModelsCountWrongAnswersAsFailures: a target answering 200 with
// {"ok":false} to every third request of a group that expects "ok":true
// has failed those requests, and a model's stage and per-second figures
// say so as its groups do: the served count (Completed) leaves them out,
// the per-second failures count them, and the per-second percentiles
// leave their latency out as the groups' histograms do. The wrong answers
// are the slow ones, so a percentile that took them in would show it.
func TestModelsCountWrongAnswersAsFailures(t *testing.T) {
	t.Parallel()
	const window = 2 * time.Second // whole seconds: the series' seconds inside it are exactly the window's
	for _, tc := range []struct {
		name  string
		model func() load.Model
		both  bool // the open loop's two engines read answers apart
	}{
		{"open", func() load.Model {
			return &load.OpenLoop{Stages: []load.OpenStage{{From: 100, To: 100, Duration: window}}}
		}, true},
		{"closed", func() load.Model { return &load.ClosedLoop{Levels: []int{2}, Duration: window} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := func(t *testing.T) { testModelWrongAnswers(t, tc.model(), window) }
			if tc.both {
				atOnce(t, f)
				return
			}
			f(t)
		})
	}
}

func testModelWrongAnswers(t *testing.T, m load.Model, window time.Duration) {
	const slow = 100 * time.Millisecond
	var wrongSent atomic.Uint64
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("i") == "2" {
			wrongSent.Add(1) // counted before the answer leaves, so the run's end sees every one
			time.Sleep(slow) // the service time of a wrong answer, not a wait for anything
			fmt.Fprint(w, `{"ok":false}`)
			return
		}
		fmt.Fprint(w, `{"ok":true}`)
	})
	src := &loadtest.FixedSource{}
	for i := range 3 {
		src.Reqs = append(src.Reqs, load.Request{Group: 0, Method: "GET", Path: fmt.Sprintf("/work?i=%d", i)})
	}
	groups := []load.Group{{Name: "work", Expect: []int{200}, Answer: &load.AnswerRule{Body: `"ok":true`}}}
	r := runModel(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Model: m}, 20*time.Second)

	if len(r.Detail.Stages) != 1 {
		t.Fatalf("%d stages, want 1", len(r.Detail.Stages))
	}
	st := r.Detail.Stages[0]
	tot := st.Total()
	if tot.WrongAnswers == 0 || tot.WrongAnswers != wrongSent.Load() || tot.Unexpected != 0 {
		t.Fatalf("the stage counts %d wrong answers and %d wrong statuses of %d; the target answered %d wrong (every third request) and no wrong status",
			tot.WrongAnswers, tot.Unexpected, tot.Requests, wrongSent.Load())
	}
	// The stage has no warm-up, so every answer that finished in its
	// window was one of its own arrivals': the right ones among them are
	// at most the groups' right answers. Counting the wrong ones too reads
	// about half as many again.
	if st.Completed > tot.Expected {
		t.Errorf("served %d in the window, more than the %d right answers of %d requests (%d wrong): a wrong answer was counted as served",
			st.Completed, tot.Expected, tot.Requests, tot.WrongAnswers)
	}
	var done, failures, inWindow uint64
	var worst time.Duration
	for _, s := range r.Detail.Series {
		done += s.Done
		failures += s.Failures
		if s.At < window {
			inWindow += s.Done - s.Failures
		}
		worst = max(worst, s.P99)
	}
	if done != tot.Requests || failures != tot.Failures() {
		t.Errorf("the seconds add to %d done and %d failed; the groups count %d requests and %d failures (%d of them wrong answers)",
			done, failures, tot.Requests, tot.Failures(), tot.WrongAnswers)
	}
	if st.Completed != inWindow {
		t.Errorf("served %d in the window, but its seconds' answers less their failures are %d", st.Completed, inWindow)
	}
	// The groups' histogram holds the right answers only; its slowest is
	// the most any second's p99 may read. The seconds' histograms keep
	// 2 significant figures to the groups' 3: 2 % covers the bucket.
	slowest := time.Duration(tot.Latency.Max()) * time.Microsecond
	if worst > slowest+slowest/50+time.Microsecond {
		t.Errorf("a second's p99 is %s, past the slowest right answer (%s): the %s wrong answers' latency is in it",
			worst, slowest, slow)
	}
}
