package load_test

import (
	"context"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// retryTarget holds an answer for slow with chance 1/5 and fails it fast
// with a 503 with chance 1/5, drawn afresh for every arrival (retries
// included) from a seeded stream: whatever the order the requests come
// in, each user's first request is slower than a retry_after under slow,
// or failed, with chance 2/5, so a user who retries sends 0.4 retries per
// action. (A pattern by arrival number read 0.5: a retry after a 503
// comes at once and takes the next, fast, number, leaving the firsts more
// than their share of the slow and failed ones.)
func retryTarget(t *testing.T, slow time.Duration) (string, *atomic.Int64) {
	var n atomic.Int64
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(7, 7))
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		mu.Lock()
		draw := rng.IntN(5)
		mu.Unlock()
		switch draw {
		case 0:
			// The service time under test, not a wait for a signal: the
			// client's clock reads at least this much, however busy the
			// machine.
			time.Sleep(slow)
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	return srv.URL, &n
}

func TestPopulationRetriesAreCountedApart(t *testing.T) {
	t.Parallel()
	// retry_after is far above a loopback answer (well under a
	// millisecond, tens on a crowded runner) and far below the slow one,
	// so which answers the users retry is the target's pattern, not the
	// machine's pace.
	after := 150 * time.Millisecond
	slow := 4 * after
	url, arrivals := retryTarget(t, slow)
	src, groups := getSource("a")
	m := &load.Population{Users: 20, Think: 50 * time.Millisecond, Warmup: 100 * time.Millisecond, Duration: 1500 * time.Millisecond,
		Seed: 1, RetryShare: 1, RetryAfter: after}
	r := runModel(t, load.Attack{Target: url, Source: src, Groups: groups, Model: m}, 20*time.Second)
	st := r.Detail.Stages[0]
	firsts := st.Sent - st.Retries
	t.Logf("%d sent, %d of them retries (%.1f/s), %d arrivals at the target; %d actions, a mean wait of %s", st.Sent, st.Retries, st.RetryRate(), arrivals.Load(), r.Detail.Actions, r.Detail.MeanWait())
	if r.Detail.Retriers != m.Users {
		t.Errorf("%d retriers, want every one of the %d users at retry_share = 1", r.Detail.Retriers, m.Users)
	}
	if r.Detail.Retries != st.Retries || st.Retries == 0 {
		t.Fatalf("the run counts %d retries, its stage %d: want the same, above 0", r.Detail.Retries, st.Retries)
	}
	if got, want := r.Detail.RetryRate(), float64(st.Retries)/st.Length.Seconds(); got != want {
		t.Errorf("retry rate %.3f/s, want retries / window = %.3f/s", got, want)
	}
	// The model's prediction: each action's first request is slow or
	// failed two times in five and then retried once, never a retry's
	// retry: 0.4 retries per first request, give or take 0.03 over some
	// 250 firsts. The bounds are five of those either side and leave room
	// for a crowded machine's slow fast answer (a retry more); no clock
	// is read.
	if ratio := float64(st.Retries) / float64(firsts); ratio < 0.25 || ratio > 0.6 {
		t.Errorf("%d retries for %d first requests (%.2f each), want about 0.4", st.Retries, firsts, ratio)
	}
	// A retry is a request of its own, counted in Sent and in the groups,
	// and the request the user walked away from is still answered and
	// recorded: the slowest latency is at least the slow answer's.
	if tot := st.Total(); tot.Requests != st.Sent {
		t.Errorf("%d requests recorded, %d sent: every first request and retry must be recorded", tot.Requests, st.Sent)
	}
	// The users did not wait for what they walked away from: every
	// measured action they got an answer to is counted (those the run's
	// end cut short aside, one a user at most), and their mean wait,
	// about 80 ms here (a fifth of the actions retried after 150 ms, a
	// fifth at once after a 503, a fifth of the retries slow), is well
	// under the slow answer they would have sat through.
	if a := r.Detail.Actions; a > firsts || a+uint64(m.Users) < firsts {
		t.Errorf("%d actions for %d first requests, want those less at most one a user", a, firsts)
	}
	if w := r.Detail.MeanWait(); w <= 0 || w > slow/2 {
		t.Errorf("the users waited %s an action, want under %s: a retrier does not wait out the slow answer", w, slow/2)
	}
	// (At 2 significant digits the histogram may read a value 1 % low.)
	if worst := st.Total().Percentile(100); worst < slow*98/100 {
		t.Errorf("slowest recorded answer %s, want at least %s: the walked-away requests' answers are recorded", worst, slow)
	}
}

func TestPopulationWithoutRetryShareRetriesNothing(t *testing.T) {
	t.Parallel()
	// Nobody retries at retry_share = 0, retry_after or not: the same
	// target, no retries.
	after := 150 * time.Millisecond
	url0, _ := retryTarget(t, 4*after)
	src, groups := getSource("a")
	m0 := &load.Population{Users: 20, Think: 50 * time.Millisecond, Duration: 500 * time.Millisecond, Seed: 1, RetryAfter: after}
	r0 := runModel(t, load.Attack{Target: url0, Source: src, Groups: groups, Model: m0}, 20*time.Second)
	if s0 := r0.Detail.Stages[0]; s0.Retries != 0 || r0.Detail.Retries != 0 || r0.Detail.Retriers != 0 || s0.Sent == 0 {
		t.Errorf("retry_share 0: %d sent, %d retries (run %d), %d retriers; want requests and no retries", s0.Sent, s0.Retries, r0.Detail.Retries, r0.Detail.Retriers)
	}
}

func TestPopulationRetryRefusals(t *testing.T) {
	t.Parallel()
	src, groups := getSource("a")
	for _, tc := range []struct {
		m    *load.Population
		want string
	}{
		{&load.Population{Users: 1, Think: time.Second, Duration: time.Second, RetryShare: 1.5, RetryAfter: time.Second}, "a retry share of 1.5"},
		{&load.Population{Users: 1, Think: time.Second, Duration: time.Second, RetryShare: -0.1, RetryAfter: time.Second}, "a retry share of -0.1"},
		{&load.Population{Users: 1, Think: time.Second, Duration: time.Second, RetryShare: 0.1}, "write how slow an answer they retry"},
	} {
		_, err := load.Run(context.Background(), load.Attack{Target: "http://127.0.0.1:1", Source: src, Groups: groups, Model: tc.m})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("share %g after %s: %v, want %q", tc.m.RetryShare, tc.m.RetryAfter, err, tc.want)
		}
	}
}
