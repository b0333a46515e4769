package pairs_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/testslot"
)

const adaptiveGate = `
[ab]
pairs = "auto"
min_pairs = 4
max_pairs = 8
warmup = "200ms"
measure = "1s"
rate = 10
idle = "2s"

[[group]]
name = "hello"
path = "/hello"
expect = 200
`

// A real adaptive gate over two example-service arms, the head twice as
// slow: the regression is settled at the first look, after min_pairs (4)
// of the 8 pairs the gate may run, and the report's notes say so. Its
// idle phase, which follows an adaptive gate's pairs, is not run: the
// pairs already fail the gate.
func TestMeasuredAdaptiveSettlesAClearRegressionEarly(t *testing.T) {
	t.Parallel()
	var v judge.Verdict
	for attempt := 1; attempt <= 3; attempt++ {
		v = runGate(t, adaptiveGate, []string{"--latency", "10ms"}, []string{"--latency", "20ms"})
		if len(v.CannotJudge) == 0 {
			break
		}
		testslot.Retry(t, fmt.Sprintf("attempt %d cannot be judged: %q", attempt, v.CannotJudge))
	}
	notes := strings.Join(v.Notes, "\n")
	if v.Code != judge.Regression {
		t.Fatalf("code %v, failures %q, notes %q, want a regression", v.Code, v.Failures, notes)
	}
	if m := metric(v, "p50.hello"); m.Pairs != 4 || !m.Fail {
		t.Errorf("p50.hello judged over %d pairs (fail %v), want 4 and a failure", m.Pairs, m.Fail)
	}
	if !strings.Contains(notes, "adaptive pairs: 4 pairs ran (min_pairs 4, max_pairs 8); regression settled at look 1") {
		t.Errorf("notes %q do not say the gate stopped after 4 pairs, settled", notes)
	}
	if v.Idle != nil || !strings.Contains(notes, "idle phase not run: the pairs already fail the gate (") {
		t.Errorf("idle %+v, notes %q; want the idle phase skipped with a note", v.Idle, notes)
	}
}

// Its A/A: the same service on both arms passes, and the notes say how
// many of the 4 to 8 pairs ran and why the gate stopped; the idle phase
// ran, after the pairs.
func TestMeasuredAdaptiveAAPasses(t *testing.T) {
	t.Parallel()
	var v judge.Verdict
	alarmed := false
	for attempt := 1; attempt <= 3; attempt++ {
		v = runGate(t, adaptiveGate, []string{"--latency", "10ms"}, []string{"--latency", "10ms"})
		if onceMoreAfterAlarm(t, v, &alarmed) {
			continue
		}
		if len(v.CannotJudge) == 0 {
			break
		}
		testslot.Retry(t, fmt.Sprintf("attempt %d cannot be judged: %q", attempt, v.CannotJudge))
	}
	notes := strings.Join(v.Notes, "\n")
	if v.Code != judge.Pass {
		t.Fatalf("code %v, failures %q, notes %q, want a pass", v.Code, v.Failures, notes)
	}
	m := metric(v, "p50.hello")
	if m.Pairs < 4 || m.Pairs > 8 || !strings.Contains(notes, "adaptive pairs: ") {
		t.Errorf("%d pairs ran, notes %q; want 4 to 8 and a note saying why the gate stopped", m.Pairs, notes)
	}
	if v.Idle == nil || v.Idle.Seconds < 2 || strings.Contains(notes, "idle phase not run") {
		t.Errorf("idle %+v, notes %q; want the 2 s idle phase judged", v.Idle, notes)
	}
	t.Logf("A/A adaptive gate: %d pairs; %s", m.Pairs, notes)
}
