package httpapi_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// experimentBody is a POST /v1/experiments body on the default branch
// with an experiment report whose knee is knee answers a second.
func experimentBody(t *testing.T, repo, commit string, knee float64) []byte {
	t.Helper()
	rep := map[string]any{"version": 1, "kind": "perfgate.experiment", "model": "closed", "exit": 0, "verdict": "answered",
		"routine": map[string]any{"knee_per_s": knee, "knee_level": 8, "first_resource": "capacity_pool_in_use", "first_resource_level": 8}}
	b, err := json.Marshal(map[string]any{"repository": repo, "target": "https://staging.example.com", "branch": "main",
		"default_branch": true, "commit": commit, "report": rep})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestExperimentsKeptOverCommits(t *testing.T) {
	a := newAPI(t, nil)
	target := url.QueryEscape("https://staging.example.com")
	for _, tc := range []struct {
		name, token string
		body        []byte
		status      int
		want        string
	}{
		{"no credential", "", experimentBody(t, "acme/api", sha(1), 700), 401, "no credential"},
		{"another repository's", a.token, experimentBody(t, "someone/else", sha(1), 700), 403, "not someone/else"},
		{"not an experiment report", a.token, []byte(`{"repository":"acme/api","target":"t","branch":"main","commit":"c","report":{"kind":"perfgate.report"}}`), 400, "not a perfgate experiment report"},
		{"no commit", a.token, []byte(`{"repository":"acme/api","target":"t","branch":"main","report":{}}`), 400, "commit is missing"},
	} {
		if ans := a.do(t, "POST", "/v1/experiments", tc.token, tc.body); ans.status != tc.status || !strings.Contains(ans.raw, tc.want) {
			t.Errorf("%s: %d %s, want %d and %q", tc.name, ans.status, ans.raw, tc.status, tc.want)
		}
	}

	first := a.do(t, "POST", "/v1/experiments", a.token, experimentBody(t, "acme/api", sha(1), 700))
	if first.status != 201 || first.body["previous"] != nil {
		t.Fatalf("first experiment: %d %s, want 201 and no previous", first.status, first.raw)
	}
	// The second, a knee 30 % lower, is answered with the first: the knee
	// the poster judges its own against.
	second := a.do(t, "POST", "/v1/experiments", a.token, experimentBody(t, "acme/api", sha(2), 490))
	prev, _ := second.body["previous"].(map[string]any)
	if second.status != 201 || prev == nil || prev["knee_per_s"] != 700.0 || prev["commit"] != sha(1) {
		t.Fatalf("second experiment: %d %s, want 201 and the first as previous", second.status, second.raw)
	}

	got := a.do(t, "GET", "/v1/experiments?repo=acme/api&target="+target, "", nil)
	es, _ := got.body["experiments"].([]any)
	if got.status != 200 || len(es) != 2 {
		t.Fatalf("GET: %d %s, want both experiments", got.status, got.raw)
	}
	if e := es[1].(map[string]any); e["knee_per_s"] != 490.0 || e["first_resource"] != "capacity_pool_in_use" || e["report"] != nil {
		t.Errorf("the newest experiment %v, want knee 490, its first resource and no report", e)
	}
	if ans := a.do(t, "GET", "/v1/experiments?repo=acme/api", "", nil); ans.status != 400 || !strings.Contains(ans.raw, "target=") {
		t.Errorf("GET without a target: %d %s", ans.status, ans.raw)
	}

	page := a.do(t, "GET", "/r/acme/api/experiments?target="+target, "", nil)
	if page.status != 200 || strings.Count(page.raw, `<circle class="knee"`) != 2 ||
		!strings.Contains(page.raw, "700.0/s") || !strings.Contains(page.raw, "490.0/s") {
		t.Errorf("the page: %d, want both knees drawn:\n%s", page.status, page.raw)
	}
}
