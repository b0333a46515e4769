package cli

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/experiment/target/targettest"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

const experimentGroups = `server_timing = "Server-Timing"

[[group]]
name = "work"
path = "/work"
expect = 200
`

// The knee tests run as one test, in parallel with each other but beside
// no other test of the package: each measures a knee, which a test loading
// the same cores beside it moves (see internal/experiment's knee tests),
// and their own load is a few clients of sleeping workers, which four of
// them at once leave well alone. One after the other they were a third of
// the package's time.
func TestMeasuredExperimentKnees(t *testing.T) {
	testtier.Heavy(t, testtier.Knee)
	for _, tc := range []struct {
		name string
		test func(*testing.T)
	}{
		{"Command", experimentCommand},
		{"RepeatSideBySide", experimentRepeatSideBySide},
		{"PostedTwiceKneeFell", experimentPostedTwiceKneeFell},
		{"RampWithoutKneeCannotAnswer", experimentRampWithoutKnee},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.test(t)
		})
	}
}

// A ramp that ends before the knee says so and exits 2. A false knee
// needs c=2 to gain under half c=1's throughput while its latency climbs
// a fifth. With 10 ms of service a loaded machine's scheduling delays (a
// few ms a request for the client and the server goroutines) did both; at
// 50 ms, in the middle phase of a rehearsal (the cores 3 % idle, the
// package's other tests beside it in its process), the workers' 50 ms
// sleeps still ended 112 ms late at p95, c=2 served 28 answers where 40
// were due, its p95 read 162 ms, and the ramp found a knee at c=1 (issue
// 19, run 172). So it runs here, among the knee tests, and reads the
// median, which a stall of a few answers leaves where it was (a stage of
// 1 s holds about 20 and 40 answers).
func experimentRampWithoutKnee(t *testing.T) {
	experimentExits(t, target.Config{Workers: 8, Service: 50 * time.Millisecond}, `model = "closed"
latency = "p50"
concurrency = [1, 2]
warmup = "100ms"
stage = "1s"`, 2, "no knee within the ramp", "extend the ramp")
}

// experimentExits runs perfgate experiment with the [experiment] table
// exp against a new pool of cfg and wants its exit code and every piece
// of want in its output.
func experimentExits(t *testing.T, cfg target.Config, exp string, code int, want ...string) {
	t.Helper()
	url := targettest.Start(t, cfg)
	planPath := writePlan(t, experimentGroups+"\n[experiment]\n"+exp+"\n")
	text, err := runCLI(t, context.Background(), "experiment", "--plan", planPath, "--target", url)
	if exit.Code(err) != code {
		t.Errorf("exit %d (%v), want %d\n%s", exit.Code(err), err, code, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("output lacks %q:\n%s", w, text)
		}
	}
}

func experimentCommand(t *testing.T) {
	// 100 ms of service, not 20: on a crowded machine each request also
	// waits for the CPU (20 to 60 ms a request was seen, at load 10 to 18
	// on 2 cores), and more so below the pool's size, where the clients'
	// own turns are in every round trip, than above it, where a queued
	// request takes a freed worker at once. The knee at c=2 holds while
	// c=4 gains under half of c=2's throughput: at 20 ms a starved c=2
	// (64 ms a request) against c=4 (39 ms) broke that, and so did 50 ms;
	// at 100 ms those waits make a gain of a sixth. A stage of 700 ms
	// still holds 7, 14 and 14 answers.
	// The knee reads the median, not p95: with so few answers a stage's
	// p95 is its slowest one, which one stall of the CPU sets (c=2's p95
	// read 175 ms against c=4's 177, and c=4's queue did not show); the
	// median is the typical answer, which the queue doubles.
	url := targettest.Start(t, target.Config{Workers: 2, Service: 100 * time.Millisecond})
	planPath := writePlan(t, experimentGroups+`
[experiment]
model = "closed"
latency = "p50"
concurrency = [1, 2, 4]
warmup = "100ms"
stage = "700ms"
gauges = ["/metrics"]
`)
	dir := t.TempDir()
	out, htmlOut := filepath.Join(dir, "exp.json"), filepath.Join(dir, "exp.html")
	text, err := runCLI(t, context.Background(), "experiment", "--plan", planPath, "--target", url, "--out", out, "--html", htmlOut)
	if err != nil {
		t.Fatalf("experiment: %v\n%s", err, text)
	}
	for _, want := range []string{"knee: c=2", "Little's law", "c=4"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
	rep, err := experiment.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Knee == nil || rep.Knee.Level != 2 || len(rep.Stages) != 3 || len(rep.Gauges) == 0 {
		t.Errorf("report: knee %+v, %d stages, %d gauges", rep.Knee, len(rep.Stages), len(rep.Gauges))
	}
	page, err := os.ReadFile(htmlOut)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), "<svg"); n < 4 {
		t.Errorf("the HTML report holds %d charts, want at least 4", n)
	}

	// The same experiment against a report whose knee was twice as high.
	k := *rep.Routine.Knee * 2
	rep.Routine.Knee = &k
	prevPath := filepath.Join(dir, "prev.json")
	if err := rep.WriteFile(prevPath); err != nil {
		t.Fatal(err)
	}
	text, err = runCLI(t, context.Background(), "experiment", "--plan", planPath, "--target", url, "--previous", prevPath)
	if exit.Code(err) != 1 || !strings.Contains(text, fmt.Sprintf("the knee moved from %.1f/s to ", k)) {
		t.Errorf("against a higher previous knee: exit %d, want 1 and the knee's move:\n%s", exit.Code(err), text)
	}
}

func TestExperimentCommandModels(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, exp string
		cfg       target.Config
		want      []string
		code      int
	}{
		{"clients abort names the client", `model = "clients"
clients = 6
ramp_up = "600ms"
duration = "1s"
on_error = "abort"`, target.Config{Workers: 16, Service: 5 * time.Millisecond, FailAbove: 3},
			[]string{"aborted: errors began with 4 clients running (status 503 on group \"work\""}, 0},
		{"a short population run gets the joining warning", `model = "population"
users = 300
think = "500ms"
warmup = "0s"
duration = "1s"`, target.Config{Workers: 64, Service: time.Millisecond},
			[]string{"no saturation verdict: over 2.0 think times", "reads about 25 % high", "run for at least 5s (10 think times)"}, 0},
		// One steady open-loop phase asks no knee question, so the
		// threshold alone decides the exit: a closed ramp here came back
		// exit 2 on a loaded machine, when c=1's round trips slowed and
		// c=2 hid them, and the ramp "found no knee" (the knee's own exit
		// is the next case's claim, not this one's). 20/s is a fifth of
		// the one worker's capacity: nothing queues or fails, and every
		// answer takes the 10 ms sleep, so p95 is never under 1 ms.
		{"a breached threshold is exit 1", `model = "open"
warmup = "100ms"
[[experiment.phase]]
name = "steady"
from = 20
to = 20
duration = "1s"

[[threshold]]
metric = "p95"
below = "1ms"`, target.Config{Workers: 1, Service: 10 * time.Millisecond},
			[]string{"threshold (plan line 17): p95 of all groups", "FAIL", "exit 1"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			experimentExits(t, tc.cfg, tc.exp, tc.code, tc.want...)
		})
	}
}

func TestExperimentCommandCanceledAndProgress(t *testing.T) {
	t.Parallel()
	url := targettest.Start(t, target.Config{Workers: 2, Service: 10 * time.Millisecond})
	planPath := writePlan(t, experimentGroups+`
[experiment]
model = "closed"
concurrency = [1, 2, 4, 8]
warmup = "200ms"
stage = "20s"
`)
	out := filepath.Join(t.TempDir(), "partial.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	var stdout, stderr lockedBuffer // cmd_exampleservice_test.go
	err := RunIO(ctx, []string{"experiment", "--plan", planPath, "--target", url, "--out", out}, &IO{Out: &stdout, Err: &stderr, IsTerminal: true})
	// Timed from the deadline: a run deaf to it would finish its first
	// 20 s stage first, so 3 s after it is headroom for a loaded machine,
	// not a tolerance (with 5 s stages the bound was 1.5 s from the end
	// of the first one).
	if deadline, _ := ctx.Deadline(); time.Since(deadline) > 3*time.Second {
		t.Errorf("a canceled experiment took %s after its deadline to return", time.Since(deadline))
	}
	if exit.Code(err) != 2 || !strings.Contains(err.Error(), "canceled: the figures are partial") {
		t.Errorf("canceled: %v (exit %d), want exit 2 saying the figures are partial", err, exit.Code(err))
	}
	if !strings.Contains(stderr.String(), "stage 1/4 c=1") {
		t.Errorf("no progress line on the terminal:\n%q", stderr.String())
	}
	rep, rerr := experiment.ReadFile(out)
	if rerr != nil || !rep.Canceled {
		t.Errorf("partial report: %v, canceled %v", rerr, rep != nil && rep.Canceled)
	}
}

func TestExperimentCommandRefuses(t *testing.T) {
	noExp := writePlan(t, experimentGroups)
	withExp := writePlan(t, experimentGroups+"\n[experiment]\nmodel = \"closed\"\nmax_concurrency = 2\n")
	withControl := writePlan(t, experimentGroups+"\n[[group]]\nname = \"light\"\npath = \"/light\"\nexpect = 200\n\n[experiment]\nmodel = \"closed\"\nmax_concurrency = 2\ncontrol = \"light\"\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--plan", noExp, "--target", "http://127.0.0.1:1"}, noExp + ":1: the plan has no [experiment] table"},
		{[]string{"--plan", withExp}, "--target is missing"},
		{[]string{"--plan", withExp, "--target", "http://127.0.0.1:1", "--shard", "4/4", "--start", "2099-01-01T00:00:00Z"}, `--shard "4/4"`},
		{[]string{"--plan", withExp, "--target", "http://127.0.0.1:1", "--shard", "1/4"}, "needs the shared --start"},
		{[]string{"--plan", withExp, "--target", "http://127.0.0.1:1", "--shard", "1/4", "--start", "2020-01-01T00:00:00Z"}, "--start 2020-01-01T00:00:00Z was"},
		{[]string{"--plan", withExp, "--target", "http://127.0.0.1:1", "--on-error", "abort"}, "--on-error applies to the clients model"},
		{[]string{"--plan", withControl, "--target", "http://127.0.0.1:1", "--shard", "0/2", "--start", "2099-01-01T00:00:00Z"}, withControl + ":16: a control ramp does not run as shards"},
	} {
		text, err := runCLI(t, context.Background(), append([]string{"experiment"}, tc.args...)...)
		if exit.Code(err) != 2 || !strings.Contains(text, tc.want) {
			t.Errorf("%v: exit %d, want 2 and %q:\n%s", tc.args, exit.Code(err), tc.want, text)
		}
	}
}

func TestCapacityTargetCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- RunIO(ctx, []string{"capacity-target", "--listen", "127.0.0.1:0", "--workers", "2", "--service", "1ms"}, &IO{Out: pw, Err: io.Discard})
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("capacity-target after cancel: %v", err)
		}
	})
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	url := strings.Fields(strings.TrimPrefix(line, "capacity target on "))[0]
	url = strings.TrimSuffix(url, ":")
	if !strings.Contains(line, "2 workers x 1ms = 2000.0 requests/s") {
		t.Errorf("first line %q", line)
	}
	for _, path := range []string{"/work", "/metrics"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || path == "/metrics" && !strings.Contains(string(body), "capacity_pool_wait_seconds ") {
			t.Errorf("GET %s: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestMeasuredShardsMergeLikeOneProcess runs four perfgate processes, each
// one shard of an open-loop schedule from a shared start, merges their
// reports and compares them with one process sending the whole schedule
// from the same start, beside them. The comparison is a timing claim, so
// it runs among the measured tests, on a slot of its own: in the suite's
// CPU-bound middle phase of a machine's first run, every process's first
// stage came 490-530 ms late at the client against the server's 64-81 ms,
// and the two p50s read 168 and 295 ms for a 50 ms service.
func TestMeasuredShardsMergeLikeOneProcess(t *testing.T) {
	t.Parallel()
	bin := buildPerfgate(t)
	// A service time long beside the machine's scheduling jitter, so two
	// runs can be compared at all.
	const service = 50 * time.Millisecond
	url := targettest.Start(t, target.Config{Workers: 64, Service: service})
	planPath := writePlan(t, experimentGroups+`
[experiment]
model = "open"
warmup = "200ms"
[[experiment.phase]]
name = "low"
from = 100
to = 100
duration = "1s"
[[experiment.phase]]
name = "high"
from = 200
to = 200
duration = "1s"
`)
	var dir, whole string
	var shards []string
	for attempt := 1; ; attempt++ {
		dir = t.TempDir()
		var errs []string
		func() {
			// Deferred: a Fatal in the run must not keep the slot from
			// the package's other measured tests.
			defer testslot.Hold(t)()
			shards, whole, errs = runShardsAndWhole(t, bin, planPath, url, dir)
		}()
		// A run in which the machine, not the service, set the latencies
		// (a generator behind its schedule, or the clients' p95 over the
		// server's by more than a fifth of the service time) compares the
		// machine's moments, not the merge: made again, up to three runs,
		// as kneeRun does (internal/experiment); the last is judged.
		starved := starvedStage(t, service, append([]string{whole}, shards...)...)
		if starved == "" || attempt == 3 {
			for _, e := range errs {
				t.Error(e)
			}
			if t.Failed() {
				t.FailNow()
			}
			break
		}
		testslot.Retry(t, fmt.Sprintf("run %d: the machine starved the generators (%s)", attempt, starved))
	}
	merged := filepath.Join(dir, "merged.json")
	text, err := runCLI(t, context.Background(), append([]string{"merge", "--out", merged}, shards...)...)
	if err != nil {
		t.Fatalf("merge: %v\n%s", err, text)
	}
	m, err := experiment.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	w, err := experiment.ReadFile(whole)
	if err != nil {
		t.Fatal(err)
	}
	if m.Shards != 4 {
		t.Errorf("merged report of %d shards, want 4", m.Shards)
	}
	for i := range w.Stages {
		ms, ws := m.Stages[i], w.Stages[i]
		if ms.Sent != ws.Sent || ms.Total.Requests != ws.Total.Requests || ms.Offered != ws.Offered {
			t.Errorf("stage %s: merged sent %d, requests %d, offered %.1f; one process %d, %d, %.1f", ws.Name, ms.Sent, ms.Total.Requests, ms.Offered, ws.Sent, ws.Total.Requests, ws.Offered)
		}
		// The merge is exact: the merged histogram is the union of the
		// shards' histograms, value for value.
		union := load.NewHistogram()
		for _, f := range shards {
			r, err := experiment.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h, err := hdrhistogram.Decode([]byte(r.Stages[i].Total.Latency.HDR))
			if err != nil {
				t.Fatal(err)
			}
			union.Merge(h)
		}
		mh, err := hdrhistogram.Decode([]byte(ms.Total.Latency.HDR))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(mh.Distribution(), union.Distribution()) {
			t.Errorf("stage %s: the merged histogram is not the union of the shards'", ws.Name)
		}
		// Against one process: two runs over the same seconds, so the
		// service's own jitter, not the merge, bounds how close they come.
		t.Logf("stage %s: p50/p90 merged %d/%d µs, one process %d/%d µs", ws.Name,
			ms.Total.Latency.P50, ms.Total.Latency.P90, ws.Total.Latency.P50, ws.Total.Latency.P90)
		if got, was := float64(ms.Total.Latency.P50), float64(ws.Total.Latency.P50); got < 0.9*was || got > 1.1*was {
			t.Errorf("stage %s p50: merged %.0f µs, one process %.0f µs, want within 10 %%", ws.Name, got, was)
		}
	}
}

// logWriter passes a process's output to the test log.
type logWriter struct {
	t      *testing.T
	prefix string
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.t.Log(w.prefix + strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

// runShardsAndWhole starts the four shards and the one process on a start
// three seconds ahead and waits for them all; it returns the shards'
// report files, the one process's, and what failed.
func runShardsAndWhole(t *testing.T, bin, planPath, url, dir string) (shards []string, whole string, errs []string) {
	t.Helper()
	// Three seconds for five processes to start on a loaded machine; a
	// process later than a second past the start refuses to run.
	start := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339Nano)
	whole = filepath.Join(dir, "whole.json")
	var cmds []*exec.Cmd
	for i := range 4 {
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		shards = append(shards, f)
		cmd := exec.Command(bin, "experiment", "--plan", planPath, "--target", url, "--shard", "/4", "--start", start, "--out", f)
		cmd.Stdout, cmd.Stderr = &logWriter{t: t, prefix: fmt.Sprintf("shard %d: ", i)}, &logWriter{t: t, prefix: fmt.Sprintf("shard %d: ", i)}
		cmd.Env = append(os.Environ(), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		cmds = append(cmds, cmd)
	}
	// The one process sends the whole schedule from the same start, at
	// the same time as the shards: each of its arrivals falls with one
	// of theirs, so both meet the same machine. Run after the shards, it
	// met another one; on a loaded machine its p50 read 65 ms against
	// the shards' 52 (the same 50 ms service), and the comparison below
	// measured the machine's load between the two runs, not the merge.
	type result struct {
		text string
		err  error
	}
	one := make(chan result, 1)
	go func() {
		text, err := runCLI(t, context.Background(), "experiment", "--plan", planPath, "--target", url, "--start", start, "--out", whole)
		one <- result{text, err}
	}()
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			errs = append(errs, fmt.Sprintf("shard %d: %v", i, err))
		}
	}
	if r := <-one; r.err != nil {
		errs = append(errs, fmt.Sprintf("one process: %v\n%s", r.err, r.text))
	}
	return shards, whole, errs
}

// starvedStage names the first stage of the reports whose generator fell
// behind (sent under 95 % of the offered rate) or whose clients' p95 was
// over the server's by more than a fifth of the service time; "" if none.
// A report a process did not write says nothing here.
func starvedStage(t *testing.T, service time.Duration, files ...string) string {
	t.Helper()
	for _, f := range files {
		r, err := experiment.ReadFile(f)
		if err != nil {
			continue
		}
		for _, st := range r.Stages {
			d := st.Derived
			switch {
			case st.Offered > 0 && d.SendRate < 0.95*st.Offered:
				return fmt.Sprintf("%s, stage %s: sent %.1f of %.1f/s", filepath.Base(f), st.Name, d.SendRate, st.Offered)
			case d.DiffMS > 0.2*float64(service.Milliseconds()):
				return fmt.Sprintf("%s, stage %s: the clients' p95 over the server's by %.1f ms", filepath.Base(f), st.Name, d.DiffMS)
			}
		}
	}
	return ""
}
