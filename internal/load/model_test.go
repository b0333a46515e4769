package load_test

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/experiment/target/targettest"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/load/loadtest"
)

func runModel(t *testing.T, a load.Attack, limit time.Duration) *load.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	a.Engine = engineOf(t)
	r, err := load.Run(ctx, a)
	if err != nil {
		t.Fatalf("load.Run: %v", err)
	}
	if r.Detail == nil {
		t.Fatal("a model's run has no Detail")
	}
	return r
}

func TestOpenLoopStagesHaveTheirOwnResults(t *testing.T) {
	t.Parallel()
	bothEngines(t, func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {})
		src, groups := getSource("a")
		m := &load.OpenLoop{Stages: []load.OpenStage{
			{From: 100, To: 100, Warmup: 200 * time.Millisecond, Duration: 500 * time.Millisecond},
			{From: 200, To: 200, Warmup: 200 * time.Millisecond, Duration: 500 * time.Millisecond},
		}}
		r := runModel(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Model: m}, 10*time.Second)
		st := r.Detail.Stages
		if len(st) != 2 {
			t.Fatalf("%d stages, want 2", len(st))
		}
		for i, want := range []uint64{50, 100} {
			if st[i].Sent != want || st[i].Total().Expected != want {
				t.Errorf("stage %d (%s): sent %d, expected answers %d; want %d of each", i, st[i].Name, st[i].Sent, st[i].Total().Expected, want)
			}
		}
		if st[1].Start != 900*time.Millisecond || st[1].Length != 500*time.Millisecond {
			t.Errorf("stage 2 measured from %s for %s, want 900ms for 500ms", st[1].Start, st[1].Length)
		}
		if w := src.Drawn[load.Warmup]; w != 60 {
			t.Errorf("warm-up draws %d, want 60 (the stages' warm-ups)", w)
		}
		if len(r.Detail.Series) < 2 {
			t.Errorf("series of %d seconds, want 2", len(r.Detail.Series))
		}
	})
}

func TestClosedLoopThroughputFollowsConcurrencyUpToThePool(t *testing.T) {
	// In parallel with the others: a parallel test's stream on the other
	// core slowed the pool by a quarter, which the floor below (half the
	// pace) and the count of requests inside the target allow for. S is
	// long beside a sleep's overshoot on a busy machine (1-2 ms).
	t.Parallel()
	cfg := target.Config{Workers: 4, Service: 50 * time.Millisecond}
	srv, err := target.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The target counts the requests inside it when each arrives: the
	// most at once in a stage is the concurrency the loop kept, a count
	// a crowded machine does not move.
	var mu sync.Mutex
	type arrival struct {
		at     time.Time
		inside int
	}
	var arrivals []arrival
	var inside int
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inside++
		arrivals = append(arrivals, arrival{time.Now(), inside})
		mu.Unlock()
		defer func() { mu.Lock(); inside--; mu.Unlock() }()
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	src, groups := getSource("a")
	m := &load.ClosedLoop{Levels: []int{1, 2, 4, 8}, Warmup: 200 * time.Millisecond, Duration: 1500 * time.Millisecond}
	r := runModel(t, load.Attack{Target: hs.URL, Source: src, Groups: groups, Model: m, ServerTiming: "Server-Timing"}, 20*time.Second)
	mu.Lock()
	defer mu.Unlock()
	for i, st := range r.Detail.Stages {
		c := float64(m.Levels[i])
		most := 0
		from, to := r.Start.Add(st.Start), r.Start.Add(st.Start+st.Length)
		for _, a := range arrivals {
			if !a.at.Before(from) && a.at.Before(to) {
				most = max(most, a.inside)
			}
		}
		if most != m.Levels[i] {
			t.Errorf("%s: at most %d requests in the target at once, want %d", st.Name, most, m.Levels[i])
		}
		want := math.Min(c, 4) / cfg.Service.Seconds()
		// The service time is a sleep of at least S, so the pool serves
		// at most W/S, and a little under: above it by 2 % is a loop
		// sending more than asked. Below, a crowded machine's waits for
		// the CPU add to every round trip (c=4 read 55/s for 80 at load
		// 16 on 2 cores): the count above is what shows that the loop
		// kept c requests out, so the floor is only that it served at
		// half the pace, not 90 %.
		got := st.Throughput()
		if got > want*1.02 || got < want*0.5 {
			t.Errorf("%s: %.1f answers/s, want %.1f (from half to 2 %% over)", st.Name, got, want)
		}
	}
	p8, p4 := r.Detail.Stages[3].Total().Percentile(50), r.Detail.Stages[2].Total().Percentile(50)
	if p8 < p4*3/2 {
		t.Errorf("p50 at c=8 %s, at c=4 %s: past the pool the requests must queue (about twice as long)", p8, p4)
	}
}

func TestPopulationRateIsLittlesLaw(t *testing.T) {
	t.Parallel()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	src, groups := getSource("a")
	think := 400 * time.Millisecond
	// Measured after every user has joined, over 10 think times: 2,000
	// requests, so the count's own spread is about 2 %.
	m := &load.Population{Users: 200, Think: think, Warmup: think, Duration: 10 * think, Seed: 1}
	r := runModel(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Model: m}, 20*time.Second)
	st := r.Detail.Stages[0]
	// Little's law holds for the window's own arrivals (Sent counts the
	// requests due in the window; their latency runs from when they were
	// due, so a user the starved generator sent late waited in it): N =
	// rate x (think + latency). The answers that finished in the window
	// (Throughput) are not those: when the shared runner starves the
	// generator at the end of the warm-up, the users it held back all
	// send at once as it wakes, and their answers land in the window on
	// top of its own (542/s read against 498/s once, beyond N/think).
	lat := time.Duration(st.Total().Latency.Mean()) * time.Microsecond
	want := float64(m.Users) / (think + lat).Seconds()
	within(t, "population arrival rate", st.SendRate(), want, 0.05)
	if st.Offered != 500 {
		t.Errorf("offered %.1f/s, want N/think = 500", st.Offered)
	}
	if k := load.ThinkTimes(st.Length, think); k < load.MinThinkTimes {
		t.Errorf("%.1f think times, want at least %d", k, load.MinThinkTimes)
	}
}

func TestPopulationJoiningTransientReadsHigh(t *testing.T) {
	// FerroFED's gate's arithmetic: 300 users, 30 s think time, a 60 s window: 10
	// rps offered reads 12.5 (measured 12.4).
	if b := load.JoiningBias(60*time.Second, 30*time.Second); math.Abs(b*10-12.5) > 1e-9 {
		t.Errorf("joining bias over 2 think times %.4f, want 1.25", b)
	}
	if b := load.JoiningBias(10*time.Second, time.Second); math.Abs(b-1.05) > 1e-9 {
		t.Errorf("joining bias over 10 think times %.4f, want 1.05", b)
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	src, groups := getSource("a")
	think := 500 * time.Millisecond
	m := &load.Population{Users: 300, Think: think, Duration: 2 * think, Seed: 2}
	// The claim is a rate over a 1 s window of wall clock, 8 % wide: 80 ms
	// in which the host runs nothing of this process loses that much of
	// the window's answers (a crowded runner's race step once read 145/s
	// for 310). A window in which the timer probe saw such a stall is no
	// evidence either way, so it is measured again, at most three times;
	// a miss in a window without one fails at once.
	const starved = 40 * time.Millisecond
	for attempt := 1; ; attempt++ {
		stall := loadtest.WatchStalls(t)
		r := runModel(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Model: m}, 20*time.Second)
		worst := stall()
		st := r.Detail.Stages[0]
		lat := time.Duration(st.Total().Latency.Mean()) * time.Microsecond
		steady := float64(m.Users) / (think + lat).Seconds()
		want := steady * load.JoiningBias(st.Length, think)
		got := st.Throughput()
		if got >= want*0.92 && got <= want*1.08 {
			return
		}
		if worst < starved || attempt == 3 {
			t.Fatalf("rate over 2 think times, joins included = %.4g, want %.4g within 8%% (attempt %d, worst timer stall %s)", got, want, attempt, worst)
		}
		t.Logf("attempt %d: rate %.4g for %.4g, but the process was stalled %s in the window; measuring again", attempt, got, want, worst)
	}
}

func TestClientsStartOnTheRampAndAbortNamesTheClient(t *testing.T) {
	// Serial: the in-process target's pace is what is measured, and
	// a parallel test's stream on the other core slowed it by a quarter.
	url := targettest.Start(t, target.Config{Workers: 16, Service: 5 * time.Millisecond, FailAbove: 3})
	src, groups := getSource("a")
	m := &load.Clients{Clients: 6, RampUp: 600 * time.Millisecond, Warmup: 600 * time.Millisecond, Duration: time.Second, AbortOnError: true}
	stall := loadtest.WatchStalls(t)
	r := runModel(t, load.Attack{Target: url, Source: src, Groups: groups, Model: m}, 20*time.Second)
	worst := stall()
	ab := r.Detail.Abort
	if ab == nil {
		t.Fatal("no abort: the target fails past 3 concurrent clients")
	}
	if ab.Clients != 4 || ab.Status != 503 {
		t.Errorf("abort: %s; want 4 clients running and status 503", ab)
	}
	if ab.At < m.StartOf(3) || ab.At > m.StartOf(4) {
		t.Errorf("abort at %s, want between the 4th client's start %s and the 5th's %s", ab.At, m.StartOf(3), m.StartOf(4))
	}
	onTheRamp(t, m, r.Detail.ClientStarts[:4], worst)
}

// onTheRamp checks that each client started at its own place on the ramp:
// never before it (a wake is never early), and before the next client's
// (the ramp's order and spacing hold), unless the process's own timers
// were as late then: a start is a goroutine's wake, and a host that
// stalls the process 95 ms (seen beside a new machine's image build)
// wakes every timer that late, a client's as much as the probe's. stall is
// the worst oversleep a probe of the process's timers saw over the run
// (loadtest.WatchStalls); the 5 ms beyond it is the probe's own 1 ms tick and the
// wake's work. The probe's worst wake and a client's are not the same
// wake: after a stall every goroutine due in it is runnable at once, and a
// client's can wait behind a running goroutine for the scheduler's 10 ms
// time slice (the runtime preempts after 10 ms) where the probe's did not.
// In the short tier, beside the other packages' tests, two clients started
// 55 and 57 ms late where the probe saw 47.8 ms.
func onTheRamp(t *testing.T, m *load.Clients, starts []time.Duration, stall time.Duration) {
	t.Helper()
	const timeSlice = 10 * time.Millisecond
	for i, s := range starts {
		late := s - m.StartOf(i)
		if late < -time.Millisecond || (s >= m.StartOf(i+1) && late > stall+timeSlice+5*time.Millisecond) {
			t.Errorf("client %d started at %s, want from %s, before the next client's start %s (or within the process's worst timer stall, %s, and a time slice)", i, s, m.StartOf(i), m.StartOf(i+1), stall)
		}
	}
}

func TestThrottledClientsShareTheTotal(t *testing.T) {
	t.Parallel()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {})
	src, groups := getSource("a")
	// 100/s in all, 12.5/s a client: a rate the test process (target and
	// generator both, under -race too) keeps up with, so the start times
	// measure the ramp, not a saturated process.
	m := &load.Clients{Clients: 8, RampUp: 400 * time.Millisecond, Throughput: 100, Warmup: 400 * time.Millisecond, Duration: 2 * time.Second}
	stall := loadtest.WatchStalls(t)
	r := runModel(t, load.Attack{Target: srv.URL, Source: src, Groups: groups, Model: m}, 20*time.Second)
	worst := stall()
	st := r.Detail.Stages[0]
	// The throttle's own rule is read from the requests due in the window
	// (Sent): 8 clients at 12.5/s each are 100/s. The answers that
	// finished in it (Throughput) say the clients kept up, but a stall of
	// the process at the warm-up's end moves up to a stall's worth of
	// answers into the window (104.5/s once, on a machine's first run
	// with an image built beside it), so their bound widens by what the
	// worst stall seen can move across one edge.
	within(t, "throttled total rate (requests due)", st.SendRate(), 100, 0.03)
	edge := worst.Seconds() / m.Duration.Seconds()
	within(t, fmt.Sprintf("throttled total rate (answers; worst stall %s)", worst), st.Throughput(), 100, 0.03+edge)
	onTheRamp(t, m, r.Detail.ClientStarts, worst)
}
