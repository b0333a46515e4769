package pairs_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/judge"
)

// A whole measured gate (heavy tier: runGate holds a test slot) over two
// example-service arms whose /hello answers the text "hello": a plan that
// expects JSON there finds both arms answering wrong, so the base cannot
// be compared with (exit 2) and the head's wrong answers are listed (all
// 20 of 2 pairs of 1 s at 10 a second); the
// answers = "same" sample finds the arms' answers alike.
func TestMeasuredWrongAnswers(t *testing.T) {
	t.Parallel()
	planText := strings.Replace(shortGate, "idle = \"0s\"\n", "idle = \"0s\"\nanswers = \"same\"\n", 1) +
		"expect_json = { \"greeting\" = \"hi\" }\n"
	v := runGate(t, planText, nil, []string{"--latency", "1ms"})
	if v.Code != judge.CannotJudge {
		t.Fatalf("code %v, want cannot judge; failures %q cannot judge %q", v.Code, v.Failures, v.CannotJudge)
	}
	const says = `group hello: 20 wrong answers; first: expect_json "greeting" = "hi": the body is not JSON; body (200): hello\n`
	if !strings.Contains(strings.Join(v.CannotJudge, "\n"), "base: "+says) || !strings.Contains(strings.Join(v.Failures, "\n"), "head: "+says) {
		t.Errorf("cannot judge %q failures %q, want both arms' wrong answers named", v.CannotJudge, v.Failures)
	}
	for _, l := range append(v.Failures, v.Notes...) {
		if strings.HasPrefix(l, "answers:") {
			t.Errorf("the arms answer alike, but: %s", l)
		}
	}
}
