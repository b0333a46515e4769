package controls_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

// The plan of the tests: the example service's create route (one row of
// items per answer), its onward read (a token exchanged, cached unless
// the knob says otherwise) and its hello. The counters, the store-write
// accounting and both controls are the seed's, over this service.
const controlsPlan = `
[ab]
pairs = 2
warmup = "500ms"
measure = "2s"
rate = 30
idle = "0s"

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

// busyLoop is the idle control's plan: the seed's idle limits over a
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
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		vars, err := plan.ResolveVars(p, nil, func(string) string { return "" })
		if err != nil {
			cancel()
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
				t.Fatal(err)
			}
			arms = append(arms, v)
		}
		rep, err = gate.Run(ctx, gate.Options{Plan: p, Vars: vars, Arms: arms, Controls: p.Controls, OutDir: out, Seed: 1, Store: true, Log: &log})
		cancel()
		if err != nil {
			t.Fatalf("gate run: %v\nlog:\n%s", err, log.String())
		}
		t.Logf("verdict %s; failures %q; cannot judge %q; notes %q", rep.Verdict.Word(), rep.Verdict.Failures, rep.Verdict.CannotJudge, rep.Verdict.Notes)
		if !loadNoise(rep.Verdict) {
			break
		}
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

// TestControlsFailAndHeadPasses is the seed's after-run part end to end:
// the head's store wrote a row per answer, the head's cached lane passes
// the exchange counter, the idle control's poller fails the second plan's
// idle limits, and the variant (the head without its token cache) fails
// the counter. The verdict passes and the summary names every count.
func TestControlsFailAndHeadPasses(t *testing.T) {
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
}

// TestBlindIdleControlCannotBeJudged: a control plan whose limits the
// poller cannot reach passes, so the gate is blind and the run is exit 2,
// the control named.
func TestBlindIdleControlCannotBeJudged(t *testing.T) {
	p := writePlan(t, "2s", "10000", "1000000000")
	rep, _ := runGate(t, p, service(), service(), 3)
	v := rep.Verdict
	// A load phase the machine spoiled decides the code itself (a metric
	// that failed stays a regression: Apply's rule, tested in
	// TestApply); otherwise the blind control makes it cannot judge.
	if !loadNoise(v) && v.Code != judge.CannotJudge {
		t.Fatalf("verdict %s, want cannot judge", v.Word())
	}
	if find(v.CannotJudge, "idle control (busy-loop.toml)", "the control passed", "blind") == "" {
		t.Fatalf("cannot judge %q does not name the idle control", v.CannotJudge)
	}
	if err := gate.VerdictError(v); v.Code == judge.CannotJudge && (err == nil || !strings.Contains(err.Error(), "idle control")) {
		t.Fatalf("the exit error %v does not name the control", err)
	}
}

// TestHeadWithoutCacheFailsCounter: a head that lost its cache does one
// exchange per request, a regression the counter names with both counts.
func TestHeadWithoutCacheFailsCounter(t *testing.T) {
	p := writePlan(t, "2s", "2", "1")
	rep, _ := runGate(t, p, service(), service("--token-cache=false"), 1)
	v := rep.Verdict
	if v.Code != judge.Regression {
		t.Fatalf("verdict %s, want regression", v.Word())
	}
	if find(v.Failures, "counter exchanges on the head", "200 requests sent", "grew by 200", "over the limit of at most 5 %") == "" {
		t.Fatalf("failures %q do not name the counter with both counts", v.Failures)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
