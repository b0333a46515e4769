package httpapi_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
)

// TestDefaultPlanByName: the default gate's name, perf-plan, is the
// default plan wherever a plan is named: a decision or release line asked
// with plan=perf-plan finds what was posted with no plan, and an attempt
// posted with plan perf-plan is filed under the default plan.
func TestDefaultPlanByName(t *testing.T) {
	a := newAPI(t, nil)
	named := func(body []byte, run string) []byte {
		return bytes.Replace(body, []byte(`"run_id":`+run), []byte(`"plan":"`+verdict.DefaultGate+`","run_id":`+run), 1)
	}
	release := bytes.Replace(submission(t, 3, 1, 0), []byte(`"event":"pull_request","head_sha"`), []byte(`"event":"release","tag":"v1.0.0","head_sha"`), 1)
	release = bytes.Replace(release, []byte(`"run_id":3`), []byte(`"base_sha":"`+sha(0xba5e)+`","run_id":3`), 1)
	for _, b := range []struct {
		name string
		body []byte
	}{
		{"run 1, no plan", submission(t, 1, 1, 0)},
		{"run 2, plan perf-plan", named(submission(t, 2, 1, 0), "2")},
		{"run 3, a release with no plan", release},
	} {
		if got := a.do(t, "POST", "/v1/attempts", a.token, b.body); got.status != 201 || strings.Contains(got.raw, `"plan"`) {
			t.Fatalf("posting %s: %d %s, want 201 under the default plan", b.name, got.status, got.raw)
		}
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"posted with no plan, asked by the default's name", "/v1/decision?repo=acme/api&run_id=1&plan=perf-plan&attempt=1", `"next":"final"`},
		{"posted by the default's name, asked with no plan", "/v1/decision?repo=acme/api&run_id=2&attempt=1", `"next":"final"`},
		{"posted by the default's name, asked by it", "/v1/decision?repo=acme/api&run_id=2&plan=perf-plan&attempt=1", `"next":"final"`},
		{"posted with no plan, asked with an empty plan", "/v1/decision?repo=acme/api&run_id=1&plan=&attempt=1", `"next":"final"`},
		{"the release line by the default's name", "/v1/release-line?repo=acme/api&tag=v1.0.0&plan=perf-plan", `"line":"Performance: `},
	} {
		got := a.do(t, "GET", tc.path, "", nil)
		if got.status != 200 || !strings.Contains(got.raw, tc.want) || got.body["plan"] != nil {
			t.Errorf("%s: GET %s answered %d %s, want 200 with %s and no plan (the default)", tc.name, tc.path, got.status, got.raw, tc.want)
		}
	}
	// The run posted by the default's name is the default plan's run: its
	// header names no plan, as the one posted with none.
	got := a.do(t, "GET", "/v1/verdicts?repo=acme/api&pr=42", "", nil)
	if got.status != 200 || !strings.Contains(got.raw, `"run_id":2`) || strings.Contains(got.raw, verdict.DefaultGate) {
		t.Errorf("the pull request's runs: %d %s, want run 2 under the default plan", got.status, got.raw)
	}
}
