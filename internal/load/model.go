package load

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Model chooses how a run's requests come. A nil Attack.Model is the plain
// open-loop run on Attack.Pacer (the gate's); the capacity experiments'
// models are OpenLoop (staged, with per-stage results), ClosedLoop (a
// concurrency ramp), Population (users who think between requests) and
// Clients (clients brought up one after another over a ramp-up period).
//
// Every model fills Result.Detail: a result per stage, measured after that
// stage's own warm-up, and a series with one point per second.
type Model interface {
	// spans is the model's stages, fixed before the run starts, so that
	// every hit belongs to a stage by its intended time alone.
	spans() ([]span, error)
	// drive runs the model's requests; OpenLoop hands them to the engines,
	// the others run a goroutine per connection (drive.go).
	drive(ctx context.Context, a *Attack, split *splitter) (*Result, error)
}

// Shard is one of several generators sharing one schedule from a shared
// Attack.Start: shard Index of Of sends every Of-th arrival (open loop),
// or runs every Of-th worker, user or client, counting from Index. The
// zero value is the whole schedule.
type Shard struct{ Index, Of int }

// mine says whether arrival, worker, user or client n is this shard's.
func (s Shard) mine(n int) bool { return s.Of <= 1 || n%s.Of == s.Index }

func (s Shard) check() error {
	if s.Of < 0 || s.Of > 0 && (s.Index < 0 || s.Index >= s.Of) {
		return fmt.Errorf("shard %d/%d: the index runs from 0 to %d", s.Index, s.Of, max(s.Of-1, 0))
	}
	return nil
}

// span is one stage on the run's clock: warm-up from begin, measured from
// begin+warm for length.
type span struct {
	name    string
	level   float64 // concurrency, arrivals/s, users or clients
	offered float64 // arrivals/s asked for; 0 when the model does not fix a rate
	begin   time.Duration
	warm    time.Duration
	length  time.Duration
}

func (s span) end() time.Duration { return s.begin + s.warm + s.length }

// ModelResult is what a model measured beyond Result: the stages, the
// per-second series, and the model's own figures. The stages are the
// model's answer; Result's own Groups pool the measured windows (the open
// loop's pool every stage whole, warm-ups included, since the engines see
// one window), kept for callers of the plain API.
type ModelResult struct {
	Model  string // "open", "closed", "population", "clients"
	Stages []*StageResult
	Series []Second

	// Population only.
	Users int
	Think time.Duration // mean think time
	Joins time.Duration // user i joins at i*Joins/Users
	// The users who retry (Population.RetryShare): how many of this run's
	// users drew to be retriers, and the measured retries over every
	// stage, each a request of its own that Sent and the groups count too.
	RetryShare float64
	RetryAfter time.Duration
	Retriers   int
	Retries    uint64
	// Actions are the users' first requests due in the measured window
	// that the user got an answer to, Waited the time from each one's due
	// time to the answer the user took: a retry's, when it walked away.
	Actions uint64
	Waited  time.Duration

	// Clients only.
	ClientStarts []time.Duration // when each client sent its first request, from the origin
	Abort        *Abort          // the first failure, when the model aborts on error
}

// RetryRate is the measured retries per second over the stages' measured
// windows: the rate the users' retries add to what they offer.
func (m *ModelResult) RetryRate() float64 {
	var window time.Duration
	for _, s := range m.Stages {
		window += s.Length
	}
	if window <= 0 {
		return 0
	}
	return float64(m.Retries) / window.Seconds()
}

// MeanWait is what a user waited for an answer, on average over the
// measured actions; 0 without any.
func (m *ModelResult) MeanWait() time.Duration {
	if m.Actions == 0 {
		return 0
	}
	return m.Waited / time.Duration(m.Actions)
}

// StageResult is one stage's measured window.
type StageResult struct {
	Name    string
	Level   float64       // the stage's load: concurrency, arrivals/s, users or clients
	Offered float64       // arrivals/s the stage asked for; 0 when the model sets none (closed loop, flat out)
	Start   time.Duration // the measured window's start, from the origin
	Length  time.Duration
	Warmup  time.Duration // the stage's own warm-up before Start
	Sent    uint64        // measured requests sent (finished or abandoned)
	// Completed counts the expected answers (GroupStats.Expected: an
	// expected status and no wrong answer) that finished inside the
	// measured window, whenever they were sent: the rate the target served
	// at, where the groups count what the window's own arrivals got.
	Completed uint64
	// Retries counts, of Sent, the population users' retries of a slow or
	// failed answer (Population.RetryShare): apart, so the rate they add
	// to the offered one is visible.
	Retries uint64
	Groups  []*GroupStats // index = Request.Group
}

// Total merges the stage's groups.
func (s *StageResult) Total() *GroupStats { return Merge(s.Groups) }

// Throughput is the expected answers per second that finished inside the
// stage's measured window.
func (s *StageResult) Throughput() float64 {
	if s.Length <= 0 {
		return 0
	}
	return float64(s.Completed) / s.Length.Seconds()
}

// RetryRate is the stage's users' retries sent per second.
func (s *StageResult) RetryRate() float64 {
	if s.Length <= 0 {
		return 0
	}
	return float64(s.Retries) / s.Length.Seconds()
}

// SendRate is the stage's requests sent per second.
func (s *StageResult) SendRate() float64 {
	if s.Length <= 0 {
		return 0
	}
	return float64(s.Sent) / s.Length.Seconds()
}

// Second is one second of the run, by when requests finished.
type Second struct {
	At             time.Duration // the second's start, from the origin
	Stage          int           // index of the stage it falls in
	Done, Failures uint64        // Failures: wrong statuses, transport errors and wrong answers, as GroupStats.Failures
	P50, P95, P99  time.Duration // latency of the expected answers that finished in it
	ServerP95      time.Duration // 0 when the target sent no timing
}

// Abort is where a run that stops at the first error stopped.
type Abort struct {
	At      time.Duration // from the origin
	Clients int           // clients running when the failure came
	Rate    float64       // the total rate they were asked for then; 0 flat out
	Group   string
	Status  int    // the unexpected status; 0 for a transport error
	Error   string // the transport error's kind
}

func (ab *Abort) String() string {
	what := fmt.Sprintf("status %d", ab.Status)
	if ab.Error != "" {
		what = ab.Error
	}
	s := fmt.Sprintf("errors began with %d clients running (%s on group %q at %s)", ab.Clients, what, ab.Group, ab.At.Round(time.Millisecond))
	if ab.Rate > 0 {
		s += fmt.Sprintf(", asked for %.1f req/s in total", ab.Rate)
	}
	return s
}

// runModel is Run for an attack with a Model.
func runModel(ctx context.Context, a Attack) (*Result, error) {
	if a.Source == nil {
		return nil, errors.New("attack has no request source")
	}
	sp, err := a.Model.spans()
	if err != nil {
		return nil, err
	}
	if len(sp) == 0 {
		return nil, errors.New("the model has no stages")
	}
	if a.Timeout <= 0 {
		a.Timeout = 30 * time.Second
	}
	if a.MaxLateness <= 0 {
		a.MaxLateness = time.Second
	}
	if a.MaxConns <= 0 {
		a.MaxConns = 10000
	}
	var measured time.Duration
	for _, s := range sp {
		measured += s.length
	}
	// The engines and the recorder see one window with no warm-up: the
	// stages' warm-ups are told apart by the splitter.
	a.Warmup, a.Duration = 0, sp[len(sp)-1].end()
	split := newSplitter(&a, sp)
	a.observe = split.observe
	r, err := a.Model.drive(ctx, &a, split)
	if err != nil {
		return nil, err
	}
	if r.Detail == nil {
		r.Detail = &ModelResult{}
	}
	r.Detail.Stages, r.Detail.Series = split.finish()
	for _, s := range r.Detail.Stages {
		r.Detail.Retries += s.Retries
	}
	if !r.Canceled {
		r.Measured = measured
	}
	return r, nil
}

// splitter files every finished request under its stage (by intended time)
// and its second (by finishing time). It runs on the recorder's goroutine.
type splitter struct {
	spans  []span
	expect [][]int
	stages []*StageResult
	secs   []*secAcc
}

type secAcc struct {
	done, failures uint64
	lat, srv       *hdrhistogram.Histogram
}

func newSplitter(a *Attack, sp []span) *splitter {
	s := &splitter{spans: sp}
	for _, g := range a.Groups {
		s.expect = append(s.expect, g.Expect)
	}
	for _, x := range sp {
		st := &StageResult{Name: x.name, Level: x.level, Offered: x.offered, Start: x.begin + x.warm, Length: x.length, Warmup: x.warm}
		for _, g := range a.Groups {
			st.Groups = append(st.Groups, &GroupStats{Name: g.Name})
		}
		s.stages = append(s.stages, st)
	}
	return s
}

// stageOf is the stage an offset from the origin falls in and whether it is
// in that stage's measured window; -1 past the last.
func (s *splitter) stageOf(off time.Duration) (int, bool) {
	i := sort.Search(len(s.spans), func(i int) bool { return s.spans[i].end() > off })
	if i == len(s.spans) {
		return -1, false
	}
	return i, off >= s.spans[i].begin+s.spans[i].warm
}

func (s *splitter) observe(origin time.Time, h *hit) {
	if h.kind == hitDropped {
		return
	}
	g := max(h.group, 0)
	var want []int
	if g < len(s.expect) {
		want = s.expect[g]
	}
	expected := isExpected(want, h.status)
	// A wrong answer is a failure here as in the groups' counts: it was
	// not served, and its latency stays out of the per-second percentiles
	// as it stays out of the groups' histograms.
	ok := answeredRight(want, h)
	if j, in := s.stageOf(h.done.Sub(origin)); ok && in {
		s.stages[j].Completed++
	}
	i, measured := s.stageOf(h.intended.Sub(origin))
	if i < 0 || !measured {
		return
	}
	st := s.stages[i]
	st.Sent++
	if h.userRetry {
		st.Retries++
	}
	if h.kind != hitDone {
		return
	}
	for g >= len(st.Groups) {
		st.Groups = append(st.Groups, &GroupStats{Name: fmt.Sprintf("group %d", len(st.Groups))})
	}
	st.Groups[g].add(h, expected)

	sec := int(h.done.Sub(origin) / time.Second)
	if sec < 0 {
		sec = 0
	}
	for sec >= len(s.secs) {
		s.secs = append(s.secs, nil)
	}
	acc := s.secs[sec]
	if acc == nil {
		acc = &secAcc{}
		s.secs[sec] = acc
	}
	acc.done++
	if !ok {
		acc.failures++
		return
	}
	if acc.lat == nil {
		acc.lat = hdrhistogram.New(1, histMax, 2)
	}
	acc.lat.RecordValue(min(max(h.done.Sub(h.intended).Microseconds(), 1), histMax))
	if h.serverDur >= 0 {
		if acc.srv == nil {
			acc.srv = hdrhistogram.New(1, histMax, 2)
		}
		acc.srv.RecordValue(min(max(h.serverDur, 1), histMax))
	}
}

func (s *splitter) finish() ([]*StageResult, []Second) {
	var out []Second
	for i, acc := range s.secs {
		if acc == nil {
			continue
		}
		at := time.Duration(i) * time.Second
		st, _ := s.stageOf(at)
		if st < 0 {
			st = len(s.spans) - 1
		}
		p := Second{At: at, Stage: st, Done: acc.done, Failures: acc.failures,
			P50: NearestRank(acc.lat, 50), P95: NearestRank(acc.lat, 95), P99: NearestRank(acc.lat, 99)}
		if acc.srv != nil {
			p.ServerP95 = NearestRank(acc.srv, 95)
		}
		out = append(out, p)
	}
	return s.stages, out
}
