package controls_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/cli"
	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/testslot"
)

// The plan of the tests: the example service's create route (one row of
// items per answer), its onward read (a token exchanged, cached unless
// the knob says otherwise) and its hello. The counters, the store-write
// accounting and both controls are FerroFED's gate's, over this service.
//
// controlsPlan's load phases only drive the controls: base and head are
// one binary, and at 2 pairs of 2 s (10-30 answers a group a phase,
// medians under a millisecond) their figures move with the scheduler
// alone. At the default 5 % the A/A failed on p50.onward (+17.8 % and
// +10.2 %, 0.33 against 0.30 ms, in 2 of 2 pairs) and on p95.create
// (+83.3 %, 38 against 21 ms: a phase's second slowest create) in runs
// 171 and 173 of issue 19, where
// TestMeasuredControlsFailAndHeadPasses needed its third attempt, and a
// failure in the last attempt fails it. So the medians and CPU are judged
// at 50 % and the tails only past ten times the base's, as the checkouts
// test does (internal/cli): a head that breaks still fails on its
// errors, and the gate's false alarms are bench/power's.
const controlsPlan = `
[ab]
pairs = 2
warmup = "500ms"
measure = "2s"
rate = 30
idle = "0s"

[tolerance]
latency = 50
cpu = 50
"p95.hello" = 1000
"p99.hello" = 1000
"p95.create" = 1000
"p99.create" = 1000
"p95.onward" = 1000
"p99.onward" = 1000

[[group]]
name = "hello"
path = "/hello"
expect = 200

[[group]]
name = "create"
method = "POST"
path = "/items"
body = '{"name":"x"}'
expect = 201

[[group]]
name = "onward"
path = "/onward/7"
expect = 200

[[store_writes]]
group = "create"
table = "items"

[[counter]]
name = "exchanges"
group = "onward"
requests = 200
url = "/calls"
field = "exchanges"
max_per_request = 5

[[control]]
kind = "idle"
plan = "busy-loop.toml"

[[control]]
kind = "variant"
overrides = ["EXAMPLED_TOKEN_CACHE=false"]
counter = "exchanges"
`

// busyLoop is the idle control's plan: FerroFED's idle limits over a
// window short enough for the suite.
const busyLoop = `
[ab]
idle = "%IDLE%"
idle_cpu = %CPU%
idle_tx_per_sec = %TX%

[[group]]
name = "hello"
path = "/hello"
expect = 200
`

func writePlan(t *testing.T, idle, cpu, tx string) *plan.Plan {
	t.Helper()
	dir := t.TempDir()
	busy := strings.NewReplacer("%IDLE%", idle, "%CPU%", cpu, "%TX%", tx).Replace(busyLoop)
	if err := os.WriteFile(filepath.Join(dir, "busy-loop.toml"), []byte(busy), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "plan.toml")
	if err := os.WriteFile(path, []byte(controlsPlan), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func service(flags ...string) gate.ArmSpec {
	return gate.ArmSpec{Command: append([]string{exampled, "--addr", "127.0.0.1:@PORT@", "--store-file", "@DIR@/store.dsn"}, flags...), Ready: "/healthz"}
}

// runGate runs a whole gate with a real PostgreSQL store and real arms,
// and returns its report. A run the shared machine stalled (cannot judge
// from the load phases, not from a control) is run again, up to attempts
// times, as the product's own retry rule would.
func runGate(t *testing.T, p *plan.Plan, base, head gate.ArmSpec, attempts int) (*report.Report, string) {
	t.Helper()
	var rep *report.Report
	var out string
	for attempt := 1; attempt <= attempts; attempt++ {
		release := testslot.Hold(t)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
		if err != nil {
			cancel()
			release()
			t.Fatal(err)
		}
		out = t.TempDir()
		var log strings.Builder
		// The plan's controls, as perfgate ab runs them: the variant arm is
		// the head's command with the control's overrides, beside the head.
		arms := gate.Pair(base, head)
		if c, ok := p.Controls.Of(plan.ControlVariant); ok {
			v, err := gate.VariantOf(head, c.Overrides)
			if err != nil {
				cancel()
				release()
				t.Fatal(err)
			}
			arms = append(arms, v)
		}
		rep, err = gate.Run(ctx, gate.Options{Plan: p, Vars: vars, Arms: arms, Controls: p.Controls, OutDir: out, Seed: 1, Store: true, Log: &log})
		cancel()
		release()
		if err != nil {
			// An arm's own log says why it stopped answering, if it did.
			var arms strings.Builder
			for _, role := range []string{"base", "head", "variant"} {
				if b, rerr := os.ReadFile(filepath.Join(out, role+".log")); rerr == nil {
					fmt.Fprintf(&arms, "%s.log (last 2,000 bytes):\n%s\n", role, b[max(0, len(b)-2000):])
				}
			}
			t.Fatalf("gate run: %v\nlog:\n%s\n%s", err, log.String(), arms.String())
		}
		if err := os.WriteFile(filepath.Join(out, gateLog), []byte(log.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Logf("verdict %s; failures %q; cannot judge %q; notes %q", rep.Verdict.Word(), rep.Verdict.Failures, rep.Verdict.CannotJudge, rep.Verdict.Notes)
		if !loadNoise(rep.Verdict) || attempt == attempts {
			break
		}
		testslot.Retry(t, fmt.Sprintf("attempt %d: the load phases decided alone (failures %q, cannot judge %q); running again", attempt, rep.Verdict.Failures, rep.Verdict.CannotJudge))
	}
	return rep, out
}

// loadNoise is a verdict the load phases decided on their own: a phase
// that could not be judged, or a metric that failed in an A/A run of two
// short pairs on a shared machine. The checks' own lines are not noise.
func loadNoise(v judge.Verdict) bool {
	if loadCannotJudge(v) {
		return true
	}
	for _, f := range v.Failures {
		if !strings.HasPrefix(f, "counter ") && !strings.HasPrefix(f, "store writes") {
			return true
		}
	}
	return false
}

func loadCannotJudge(v judge.Verdict) bool {
	for _, c := range v.CannotJudge {
		if !strings.Contains(c, "control") {
			return true
		}
	}
	return false
}

// gateLog is where runGate keeps the gate's log lines in its folder.
const gateLog = "gate-test.log"

// compareAgain judges the gate's own report again offline, as a user
// would with perfgate compare, and checks that the controls' lines and
// their effect on the verdict came through: the same exit code, and every
// control line printed and kept in the new JSON's verdict.
func compareAgain(t *testing.T, out string, rep *report.Report) {
	t.Helper()
	if rep.Controls == nil {
		t.Fatal("the report keeps no controls outcome")
	}
	again := filepath.Join(t.TempDir(), "again.json")
	var stdout, stderr strings.Builder
	err := cli.RunIO(context.Background(), []string{"compare", "--report", filepath.Join(out, gate.ReportFile), "--json", again},
		&cli.IO{Out: &stdout, Err: &stderr, Getenv: func(string) string { return "" }})
	if got, want := exit.Code(err), exit.Code(gate.VerdictError(rep.Verdict)); got != want {
		t.Fatalf("compare exits %d, the gate's verdict %d: %v\n%s", got, want, err, stdout.String())
	}
	r, err := report.Read(again)
	if err != nil {
		t.Fatal(err)
	}
	lines := append(append(append([]string(nil), rep.Controls.Failures...), rep.Controls.CannotJudge...), rep.Controls.Notes...)
	if len(lines) == 0 {
		t.Fatal("the controls outcome holds no line")
	}
	judged := append(append(append([]string(nil), r.Verdict.Failures...), r.Verdict.CannotJudge...), r.Verdict.Notes...)
	for _, l := range lines {
		if !strings.Contains(stdout.String(), l) {
			t.Errorf("compare does not print the control line %q", l)
		}
		if !slices.Contains(judged, l) {
			t.Errorf("compare's JSON verdict lacks the control line %q", l)
		}
	}
	if r.Verdict.Code != rep.Verdict.Code {
		t.Errorf("compare's verdict %s, the gate's %s", r.Verdict.Word(), rep.Verdict.Word())
	}
}

func find(lines []string, parts ...string) string {
	for _, l := range lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(l, p)
		}
		if ok {
			return l
		}
	}
	return ""
}

// TestMeasuredControlsFailAndHeadPasses is FerroFED's gate's after-run part end to
// end: the head's store wrote a row per answer, the head's cached lane
// passes the exchange counter, the idle control's poller fails the second
// plan's idle limits, and the variant (the head without its token cache)
// fails the counter. The verdict passes and the summary names every count.
func TestMeasuredControlsFailAndHeadPasses(t *testing.T) {
	t.Parallel()
	p := writePlan(t, "3s", "2", "1")
	rep, out := runGate(t, p, service(), service(), 3)
	v := rep.Verdict
	// The head passes every check: no failure, and no control was blind.
	// Whether the load phases could be judged is the shared machine's
	// business (runGate retried them); when they could, the verdict is a
	// pass.
	if len(v.Failures) > 0 || find(v.CannotJudge, "control") != "" {
		t.Fatalf("verdict %s: failures %q, cannot judge %q", v.Word(), v.Failures, v.CannotJudge)
	}
	if !loadNoise(v) && v.Code != judge.Pass {
		t.Fatalf("verdict %s, want pass", v.Word())
	}
	writes := find(v.Notes, "store writes", "create", "items")
	if writes == "" {
		t.Fatalf("no store-write line in the notes %q", v.Notes)
	}
	answers := controls.Answers(rep.Input.Head, "create")
	// 2 pairs of 2 s at 30 arrivals/s, one in three a create: 40.
	if answers < 30 {
		t.Fatalf("the head answered %d of its 40 measured creates as expected", answers)
	}
	if !strings.Contains(writes, "answered "+itoa(answers)+" requests") {
		t.Errorf("the store-write line %q does not name the %d answers", writes, answers)
	}
	if head := find(v.Notes, "counter exchanges on the head", "200 requests sent", "within"); head == "" {
		t.Errorf("no passing head counter line with both counts in %q", v.Notes)
	}
	if variant := find(v.Notes, "variant control", "counter exchanges on the variant", "grew by 200", "over the limit", "as a control must"); variant == "" {
		t.Errorf("the variant did not fail the counter with 200 exchanges: %q", v.Notes)
	}
	idle := find(v.Notes, "idle control (busy-loop.toml)", "as a control must")
	if idle == "" {
		t.Fatalf("the idle control did not fail: %q", v.Notes)
	}
	b, err := os.ReadFile(filepath.Join(out, gate.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"idle control", "variant control", "store writes"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the job summary does not name %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "variant.log")); err != nil {
		t.Errorf("the variant arm left no log: %v", err)
	}
	// The variant is a third arm of its own, tagged as such in the report,
	// beside the head rather than in its place: its own port, and its
	// own store database.
	if rep.Variant == nil || rep.Variant.Name != "variant" || !slices.Equal(rep.Variant.Overrides, []string{"EXAMPLED_TOKEN_CACHE=false"}) {
		t.Errorf("the report's variant arm is %+v", rep.Variant)
	}
	if c := rep.Controls; c == nil || c.Variant == nil || !c.Variant.Fail || c.Variant.Arm != "variant" || len(c.Counters) != 1 || c.Counters[0].Fail || c.Counters[0].Arm != "head" {
		t.Errorf("the report's controls: the variant must fail the counter the head passes: %+v", c)
	}
	log, err := os.ReadFile(filepath.Join(out, gateLog))
	if err != nil {
		t.Fatal(err)
	}
	urls := map[string]string{}
	for _, l := range strings.Split(string(log), "\n") {
		if role, rest, ok := strings.Cut(l, ": "); ok && (role == "head" || role == "variant") && strings.HasSuffix(rest, ")") {
			urls[role] = rest[strings.LastIndex(rest, "(")+1 : len(rest)-1]
		}
	}
	if urls["head"] == "" || urls["variant"] == "" || urls["head"] == urls["variant"] {
		t.Errorf("the head and the variant must listen apart: %v\n%s", urls, log)
	}
	if dsn, err := os.ReadFile(filepath.Join(out, "variant", "store.dsn")); err != nil || !strings.Contains(string(dsn), "perf_variant") {
		t.Errorf("the variant's store.dsn names no perf_variant database: %q, %v", dsn, err)
	}
	compareAgain(t, out, rep)
}

// TestMeasuredBlindIdleControlCannotBeJudged: a control plan whose limits the
// poller cannot reach passes, so the gate is blind and the run is exit 2,
// the control named.
func TestMeasuredBlindIdleControlCannotBeJudged(t *testing.T) {
	t.Parallel()
	p := writePlan(t, "2s", "10000", "1000000000")
	rep, out := runGate(t, p, service(), service(), 3)
	v := rep.Verdict
	// A load phase the machine spoiled decides the code itself (a metric
	// that failed stays a regression: judge.Verdict.AddChecks' rule, tested in
	// judge's TestAddChecks); otherwise the blind control makes it cannot judge.
	if !loadNoise(v) && v.Code != judge.CannotJudge {
		t.Fatalf("verdict %s, want cannot judge", v.Word())
	}
	if find(v.CannotJudge, "idle control (busy-loop.toml)", "the control passed", "blind") == "" {
		t.Fatalf("cannot judge %q does not name the idle control", v.CannotJudge)
	}
	if err := gate.VerdictError(v); v.Code == judge.CannotJudge && (err == nil || !strings.Contains(err.Error(), "idle control")) {
		t.Fatalf("the exit error %v does not name the control", err)
	}
	// Judged again offline, the control that did not fail still keeps a
	// pass from being one.
	compareAgain(t, out, rep)
}

// TestMeasuredHeadWithoutCacheFailsCounter: a head that lost its cache does one
// exchange per request, a regression the counter names with both counts.
func TestMeasuredHeadWithoutCacheFailsCounter(t *testing.T) {
	t.Parallel()
	p := writePlan(t, "2s", "2", "1")
	rep, out := runGate(t, p, service(), service("--token-cache=false"), 1)
	v := rep.Verdict
	if v.Code != judge.Regression {
		t.Fatalf("verdict %s, want regression", v.Word())
	}
	if find(v.Failures, "counter exchanges on the head", "200 requests sent", "grew by 200", "over the limit of at most 5 %") == "" {
		t.Fatalf("failures %q do not name the counter with both counts", v.Failures)
	}
	// Judged again offline, the head's failed counter is still a
	// regression.
	compareAgain(t, out, rep)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// syncLog is a gate log the test reads while the gate writes it.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestInterruptedVariantIsStopped: a run interrupted (SIGINT, SIGTERM:
// its context canceled) while the variant arm serves its counter stops
// the variant with the head and the base, and is exit 2. The variant is
// slowed to a second a request so that the interruption finds it up.
func TestInterruptedVariantIsStopped(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "plan.toml")
	const slow = `
[ab]
pairs = 1
warmup = "0s"
measure = "1s"
rate = 10
idle = "0s"

[[group]]
name = "onward"
path = "/onward/7"
expect = 200

[[counter]]
name = "exchanges"
group = "onward"
requests = 50
url = "/calls"
field = "exchanges"
max_per_request = 5

[[control]]
kind = "variant"
overrides = ["EXAMPLED_LATENCY=1s"]
counter = "exchanges"
`
	if err := os.WriteFile(path, []byte(slow), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := plan.ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	// No store: the counter reads HTTP, and the arms need none.
	arm := gate.ArmSpec{Command: []string{exampled, "--addr", "127.0.0.1:@PORT@"}, Ready: "/healthz"}
	head := arm
	c, _ := p.Controls.Of(plan.ControlVariant)
	variant, err := gate.VariantOf(head, c.Overrides)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	log := &syncLog{}
	done := make(chan error, 1)
	go func() {
		_, err := gate.Run(ctx, gate.Options{Plan: p, Vars: vars, Arms: append(gate.Pair(arm, head), variant), Controls: p.Controls, OutDir: out, Seed: 1, Log: log})
		done <- err
	}()
	// The variant's URL is logged as the gate prepares its arms; it is up
	// once it answers.
	var url string
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("the variant never answered:\n%s", log.String())
		}
		for _, l := range strings.Split(log.String(), "\n") {
			if rest, ok := strings.CutPrefix(l, "variant: "); ok && strings.HasSuffix(rest, ")") {
				url = rest[strings.LastIndex(rest, "(")+1 : len(rest)-1]
			}
		}
		if url != "" && answers(url) {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the gate ended before the variant answered: %v\n%s", err, log.String())
		default:
		}
	}
	cancel()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the interrupted gate did not return")
	}
	if exit.Code(err) != exit.CannotJudge {
		t.Fatalf("the interrupted gate returned %v, want exit 2", err)
	}
	if answers(url) {
		t.Fatalf("the variant at %s still answers after the interrupted gate returned", url)
	}
}

// answers reports whether an HTTP server answers at url.
func answers(url string) bool {
	client := http.Client{Timeout: 3 * time.Second} // the slowed variant takes a second
	resp, err := client.Get(url + "/healthz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}
