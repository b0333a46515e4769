package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/verdict"
)

const (
	headSHA  = "3dca65fa3e8d4b3da3f3d056c59aee1c50f41390" // the pull request's head
	mergeSHA = "e7fdf7640066d71ad16a86fbcbb9c6a10a18af4f" // GITHUB_SHA on pull_request: the merge commit
	queueSHA = "ce587453ced02b1526dfb4cb910479d431683101" // merge_group.head_sha
)

func prTarget(name string) verdict.CheckTarget {
	return verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: headSHA, Name: name, Event: "pull_request", PR: 7, Plan: "api"}
}

// sentNames returns the "name" field of every check-run request body, to
// prove none was sent empty (UpdateCheckRunOptions.Name has no omitempty).
func sentNames(t *testing.T, calls []fakeCall) []string {
	t.Helper()
	var names []string
	for _, c := range calls {
		var m map[string]any
		if err := json.Unmarshal(c.Body, &m); err != nil {
			t.Fatalf("%s %s: body is not JSON: %v", c.Method, c.Path, err)
		}
		n, ok := m["name"].(string)
		if !ok {
			t.Errorf("%s %s: no name in %s", c.Method, c.Path, c.Body)
		}
		names = append(names, n)
	}
	return names
}

func TestCheckOnPullRequestHeadCreatedOnceThenCompleted(t *testing.T) {
	for _, tc := range []struct {
		word, title    string
		wantConclusion string
		wantTitle      string
	}{
		{verdict.WordPass, "pass: 14 metrics within tolerance", "success", "pass: 14 metrics within tolerance"},
		{verdict.WordRegression, "regression: p99 of search +41 %", "failure", "regression: p99 of search +41 %"},
		{verdict.WordCannotJudge, "the base fell behind its schedule", "failure", "cannot judge: the base fell behind its schedule"},
		{verdict.WordCannotJudge, "cannot judge: a stall", "failure", "cannot judge: a stall"},
		{verdict.WordCannotJudge, "", "failure", "cannot judge"},
		{verdict.WordPass, "", "success", "pass"},
	} {
		t.Run(tc.word+"/"+tc.title, func(t *testing.T) {
			f := newFakeGitHub(t)
			c := f.client()
			ctx := context.Background()
			target := prTarget("perfgate (api)")
			// Every attempt's arrival marks it in progress; only the first creates.
			for range 3 {
				if err := c.CheckInProgress(ctx, target); err != nil {
					t.Fatalf("CheckInProgress: %v", err)
				}
			}
			if runs := f.runsOn(headSHA); len(runs) != 1 || runs[0].Status != "in_progress" {
				t.Fatalf("after the starts: runs on the head = %+v, want one in_progress", runs)
			}
			o := verdict.Outcome{Word: tc.word, Title: tc.title, Summary: "## perfgate\n\n| metric | ratio |\n|---|---|\n"}
			if err := c.CheckCompleted(ctx, target, o); err != nil {
				t.Fatalf("CheckCompleted: %v", err)
			}
			if n := len(f.callsTo("POST", "/check-runs")); n != 1 {
				t.Errorf("check runs created: %d, want 1", n)
			}
			runs := f.runsOn(headSHA)
			if len(runs) != 1 {
				t.Fatalf("runs on the head SHA: %d, want 1", len(runs))
			}
			run := runs[0]
			if run.Name != "perfgate (api)" || run.Status != "completed" || run.Conclusion != tc.wantConclusion || run.Title != tc.wantTitle {
				t.Errorf("run = name %q status %q conclusion %q title %q; want perfgate (api), completed, %s, %q",
					run.Name, run.Status, run.Conclusion, run.Title, tc.wantConclusion, tc.wantTitle)
			}
			if run.Summary != o.Summary || run.CompletedAt == "" {
				t.Errorf("summary %q completed_at %q", run.Summary, run.CompletedAt)
			}
			if len(f.runsOn(mergeSHA)) != 0 {
				t.Error("a check landed on the merge commit, where the pull request loses it")
			}
			for _, n := range sentNames(t, f.callsTo("PATCH", "")) {
				if n != "perfgate (api)" {
					t.Errorf("an update sent name %q", n)
				}
			}
			for _, l := range f.callsTo("GET", "/check-runs") {
				if got := l.Query["check_name"]; len(got) != 1 || got[0] != "perfgate (api)" {
					t.Errorf("listed check runs with check_name %v", got)
				}
				if !strings.Contains(l.Path, "/commits/"+headSHA+"/") {
					t.Errorf("listed check runs of %s, want the head SHA", l.Path)
				}
			}
		})
	}
}

func TestMergeGroupCheckOnItsHeadSHA(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	ctx := context.Background()
	target := verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: queueSHA, Name: "perfgate", Event: "merge_group", Plan: "api"}
	if err := c.CheckInProgress(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckCompleted(ctx, target, verdict.Outcome{Word: verdict.WordPass, Summary: "ok"}); err != nil {
		t.Fatal(err)
	}
	runs := f.runsOn(queueSHA)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].Name != "perfgate" {
		t.Fatalf("runs on the merge group's head = %+v, want one perfgate success", runs)
	}
	// A merge group has no pull request: the comment is skipped, not sent.
	if err := c.UpsertComment(ctx, target, "report"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.callsTo("GET", "/comments")) + len(f.callsTo("POST", "/comments")); n != 0 {
		t.Errorf("%d comment requests for an event without a pull request", n)
	}
}

// TestCheckOnACapitalizedSHA: git reads a commit name in capitals as the
// same commit, so publish takes one and sends it in lower case, the form
// GitHub reports head_sha in: the start and the completion find one run.
func TestCheckOnACapitalizedSHA(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	ctx := context.Background()
	upper := prTarget("perfgate")
	upper.SHA = strings.ToUpper(headSHA)
	if err := c.CheckInProgress(ctx, upper); err != nil {
		t.Fatalf("CheckInProgress with %s: %v", upper.SHA, err)
	}
	if err := c.CheckCompleted(ctx, prTarget("perfgate"), verdict.Outcome{Word: verdict.WordPass, Summary: "ok"}); err != nil {
		t.Fatal(err)
	}
	if runs := f.runsOn(headSHA); len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Fatalf("runs on %s = %+v, want the one run started in capitals, completed", headSHA, runs)
	}
	for _, call := range f.callsTo("", "") {
		if strings.Contains(call.Path, upper.SHA) || strings.Contains(string(call.Body), upper.SHA) {
			t.Errorf("%s %s %s: the SHA went out in capitals", call.Method, call.Path, call.Body)
		}
	}
}

func TestChecksOfTwoPlansKeepApart(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	ctx := context.Background()
	api, web := prTarget("perfgate (api)"), prTarget("perfgate (web)")
	for _, tg := range []verdict.CheckTarget{api, web} {
		if err := c.CheckInProgress(ctx, tg); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.CheckCompleted(ctx, web, verdict.Outcome{Word: verdict.WordRegression, Summary: "slow"}); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range f.runsOn(headSHA) {
		got[r.Name] = r.Status + "/" + r.Conclusion
	}
	want := map[string]string{"perfgate (api)": "in_progress/", "perfgate (web)": "completed/failure"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("runs = %v, want %v", got, want)
	}
}

// TestCompletedCheckIsUpdatedNotDuplicated: a head and plan have one check
// run. A later run attempt ("Re-run all jobs") starting leaves the earlier
// verdict standing, and its completion updates that same run.
func TestCompletedCheckIsUpdatedNotDuplicated(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	ctx := context.Background()
	target := prTarget("perfgate")
	// Completing with no start published creates the run completed.
	if err := c.CheckCompleted(ctx, target, verdict.Outcome{Word: verdict.WordRegression, Summary: "slow"}); err != nil {
		t.Fatal(err)
	}
	if err := c.CheckInProgress(ctx, target); err != nil {
		t.Fatal(err)
	}
	if runs := f.runsOn(headSHA); len(runs) != 1 || runs[0].Conclusion != "failure" {
		t.Fatalf("after a re-run started the runs are %+v, want the one failure standing", runs)
	}
	if err := c.CheckCompleted(ctx, target, verdict.Outcome{Word: verdict.WordPass, Summary: "fine"}); err != nil {
		t.Fatal(err)
	}
	runs := f.runsOn(headSHA)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].Summary != "fine" {
		t.Errorf("runs = %+v, want the one run updated to success", runs)
	}
	if n := len(f.callsTo("POST", "/check-runs")); n != 1 {
		t.Errorf("%d check runs created, want 1", n)
	}
}

func annotations(n int) []verdict.Annotation {
	out := make([]verdict.Annotation, n)
	for i := range out {
		out[i] = verdict.Annotation{Path: "perf/plan.toml", Line: i, Title: fmt.Sprintf("metric %d", i), Message: fmt.Sprintf("p99 +%d %%", 30+i)}
	}
	return out
}

func TestAnnotationsGoFiftyToARequest(t *testing.T) {
	for _, tc := range []struct {
		annotations, wantRequests int
	}{
		{0, 1}, {1, 1}, {50, 1}, {51, 2}, {120, 3}, {150, 3},
	} {
		t.Run(strconv.Itoa(tc.annotations), func(t *testing.T) {
			f := newFakeGitHub(t)
			c := f.client()
			ctx := context.Background()
			target := prTarget("perfgate (api)")
			if err := c.CheckInProgress(ctx, target); err != nil {
				t.Fatal(err)
			}
			o := verdict.Outcome{Word: verdict.WordRegression, Title: "regression", Summary: "slow", Annotations: annotations(tc.annotations)}
			if err := c.CheckCompleted(ctx, target, o); err != nil {
				t.Fatalf("CheckCompleted: %v", err)
			}
			updates := f.callsTo("PATCH", "")
			if len(updates) != tc.wantRequests {
				t.Errorf("completion took %d updates, want %d", len(updates), tc.wantRequests)
			}
			for _, n := range sentNames(t, updates) {
				if n != target.Name {
					t.Errorf("an update sent name %q, want %q", n, target.Name)
				}
			}
			run := f.runsOn(headSHA)[0]
			if len(run.Annotations) != tc.annotations {
				t.Fatalf("run holds %d annotations, want %d", len(run.Annotations), tc.annotations)
			}
			for i, a := range run.Annotations {
				if a.Title != fmt.Sprintf("metric %d", i) || a.StartLine != max(i, 1) || a.Path != "perf/plan.toml" || a.AnnotationLevel != "failure" {
					t.Fatalf("annotation %d = %+v (out of order or mis-pinned)", i, a)
				}
			}
			if run.Conclusion != "failure" || run.Name != target.Name {
				t.Errorf("run = %s %s, want %s failure", run.Name, run.Conclusion, target.Name)
			}
		})
	}
}

func TestSummaryCutToGitHubsLimit(t *testing.T) {
	for _, tc := range []struct {
		name    string
		summary string
		cut     bool
	}{
		{"short", "## perfgate\nall fine\n", false},
		{"exactly the limit", strings.Repeat("a", MaxCheckOutput), false},
		{"one past the limit", strings.Repeat("a", MaxCheckOutput+1), true},
		{"table rows", strings.Repeat("| search | 1.02 | 25 % |\n", 4000), true},
		{"three-byte runes", strings.Repeat("測", 30000), true},
		{"four-byte runes, no line ends", strings.Repeat("🐢", 20000), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			c := f.client()
			target := prTarget("perfgate")
			if err := c.CheckCompleted(context.Background(), target, verdict.Outcome{Word: verdict.WordPass, Summary: tc.summary}); err != nil {
				t.Fatalf("CheckCompleted: %v", err)
			}
			got := f.runsOn(headSHA)[0].Summary
			if len(got) > MaxCheckOutput || !utf8.ValidString(got) {
				t.Fatalf("summary is %d bytes (limit %d), valid UTF-8 %v", len(got), MaxCheckOutput, utf8.ValidString(got))
			}
			said := strings.Contains(got, "perfgate cut this text here")
			if said != tc.cut {
				t.Errorf("note that it was cut present = %v, want %v", said, tc.cut)
			}
			if !tc.cut && got != tc.summary {
				t.Error("a summary within the limit was changed")
			}
			if tc.cut {
				head := got[:strings.Index(got, "\n\n---\n*perfgate cut")]
				if !strings.HasPrefix(tc.summary, head) || len(head) < MaxCheckOutput-2048-400 {
					t.Errorf("kept %d bytes that are not the summary's head, or too few", len(head))
				}
				if strings.HasPrefix(tc.name, "table") && !strings.HasSuffix(head, "|") {
					t.Errorf("cut inside a table row: ...%q", head[len(head)-30:])
				}
			}
		})
	}
}

func TestCheckRefusesBadInputBeforeAnyRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target verdict.CheckTarget
		o      verdict.Outcome
		want   string
	}{
		{"branch instead of SHA", verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: "main", Name: "perfgate"}, verdict.Outcome{Word: verdict.WordPass}, "not a commit SHA"},
		{"short SHA", verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: headSHA[:12], Name: "perfgate"}, verdict.Outcome{Word: verdict.WordPass}, "40 hex digits"},
		{"SHA-256 name a digit short", verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: strings.Repeat("c", 63), Name: "perfgate"}, verdict.Outcome{Word: verdict.WordPass}, "40 hex digits, or 64 in a SHA-256 repository"},
		{"not hex", verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: strings.Repeat("G", 40), Name: "perfgate"}, verdict.Outcome{Word: verdict.WordPass}, `"` + strings.Repeat("G", 40) + `" is not a commit SHA`},
		{"no name", verdict.CheckTarget{Owner: "acme", Repo: "api", SHA: headSHA}, verdict.Outcome{Word: verdict.WordPass}, "no name"},
		{"no repository", verdict.CheckTarget{SHA: headSHA, Name: "perfgate"}, verdict.Outcome{Word: verdict.WordPass}, "owner and name"},
		{"neutral is not a verdict", prTarget("perfgate"), verdict.Outcome{Word: "neutral"}, `"neutral" is not a verdict`},
		{"annotation without a file", prTarget("perfgate"), verdict.Outcome{Word: verdict.WordRegression, Annotations: []verdict.Annotation{{Line: 3, Title: "p99"}}}, "names no file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			err := f.client().CheckCompleted(context.Background(), tc.target, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			if n := len(f.callsTo("", "")); n != 0 {
				t.Errorf("%d requests sent for refused input", n)
			}
		})
	}
}

func TestRateLimitsSurfaceDistinctly(t *testing.T) {
	reset := time.Now().Add(time.Hour).Truncate(time.Second)
	for _, tc := range []struct {
		name      string
		failure   fakeFailure
		limited   bool
		secondary bool
		want      string
	}{
		{"hourly quota", fakeFailure{Status: http.StatusForbidden, Fixture: "error_rate_limit.json", Header: map[string]string{
			"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": strconv.FormatInt(reset.Unix(), 10)}},
			true, false, "hourly rate limit"},
		{"secondary limit", fakeFailure{Status: http.StatusForbidden, Fixture: "error_secondary_rate_limit.json", Header: map[string]string{"Retry-After": "60"}},
			true, true, "secondary rate limit"},
		{"429", fakeFailure{Status: http.StatusTooManyRequests, Fixture: "error_secondary_rate_limit.json", Header: map[string]string{"Retry-After": "30"}},
			true, true, "secondary rate limit"},
		{"no permission", fakeFailure{Status: http.StatusForbidden, Fixture: "error_resource_not_accessible.json"},
			false, false, `"checks: write" permission`},
		{"bad credentials", fakeFailure{Status: http.StatusUnauthorized, Fixture: "error_bad_credentials.json"},
			false, false, "refused the credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			tc.failure.Method, tc.failure.PathSuffix = "POST", "/check-runs"
			f.fail(tc.failure)
			err := f.client().CheckInProgress(context.Background(), prTarget("perfgate"))
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), "creating check run \"perfgate\" on "+headSHA) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say what was being done and %q", err, tc.want)
			}
			if strings.Contains(err.Error(), fakeToken) {
				t.Error("the error quotes the token")
			}
			if errors.Is(err, ErrRateLimited) != tc.limited {
				t.Errorf("errors.Is(err, ErrRateLimited) = %v, want %v", !tc.limited, tc.limited)
			}
			var rl *RateLimitedError
			if errors.As(err, &rl) != tc.limited {
				t.Fatalf("errors.As RateLimitedError = %v, want %v", !tc.limited, tc.limited)
			}
			if !tc.limited {
				return
			}
			if rl.Secondary != tc.secondary || rl.RetryAt().IsZero() {
				t.Errorf("secondary %v retry at %v", rl.Secondary, rl.RetryAt())
			}
			if !tc.secondary {
				var ghErr *github.RateLimitError
				if !errors.As(err, &ghErr) || !rl.RetryAt().Equal(reset) {
					t.Errorf("go-github's error not kept, or retry %v != reset %v", rl.RetryAt(), reset)
				}
			}
		})
	}
}

func TestCompletionRetriedAfterARateLimit(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	ctx := context.Background()
	target := prTarget("perfgate")
	if err := c.CheckInProgress(ctx, target); err != nil {
		t.Fatal(err)
	}
	secondary := fakeFailure{Method: "PATCH", Status: http.StatusForbidden, Fixture: "error_secondary_rate_limit.json", Header: map[string]string{"Retry-After": "1"}}
	f.fail(secondary)
	o := verdict.Outcome{Word: verdict.WordRegression, Summary: "slow", Annotations: annotations(120)}
	err := c.CheckCompleted(ctx, target, o)
	if !errors.Is(err, ErrRateLimited) || !strings.Contains(err.Error(), "completing check run") {
		t.Fatalf("err = %v, want a rate limit while completing", err)
	}
	// go-github itself refuses further calls until then; the caller waits.
	var rl *RateLimitedError
	if !errors.As(err, &rl) {
		t.Fatalf("err = %v, not a RateLimitedError", err)
	}
	if time.Until(rl.RetryAt()) > 2*time.Second {
		t.Fatalf("retry at %v, want within Retry-After's second", rl.RetryAt())
	}
	time.Sleep(time.Until(rl.RetryAt()) + 50*time.Millisecond)
	// The run stayed in progress: the retry completes that same run.
	if err := c.CheckCompleted(ctx, target, o); err != nil {
		t.Fatalf("retry: %v", err)
	}
	runs := f.runsOn(headSHA)
	if len(runs) != 1 || runs[0].Conclusion != "failure" || len(runs[0].Annotations) != 120 {
		t.Fatalf("runs = %d, first %s with %d annotations; want one failure with 120", len(runs), runs[0].Conclusion, len(runs[0].Annotations))
	}

	// Refused half-way through the annotations: the error says how far it got.
	f2 := newFakeGitHub(t)
	c2 := f2.client()
	if err := c2.CheckInProgress(ctx, target); err != nil {
		t.Fatal(err)
	}
	// The completion passes; the first further update is refused.
	f2.fail(fakeFailure{Method: "PATCH", Skip: 1, Status: http.StatusForbidden, Fixture: "error_resource_not_accessible.json"})
	err = c2.CheckCompleted(ctx, target, o)
	if err == nil || !strings.Contains(err.Error(), "adding annotations 51-100 of 120") {
		t.Fatalf("err = %v, want it to name the batch", err)
	}
}

func TestAnnotationTitleCutAndCancelledContext(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	long := verdict.Annotation{Path: "perf/plan.toml", Line: 4, Title: strings.Repeat("é", 200), Message: "p99 +40 %"}
	if err := c.CheckCompleted(context.Background(), prTarget("perfgate"), verdict.Outcome{Word: verdict.WordRegression, Summary: "slow", Annotations: []verdict.Annotation{long}}); err != nil {
		t.Fatal(err)
	}
	got := f.runsOn(headSHA)[0].Annotations[0].Title
	if len(got) > MaxAnnotationTitle || !utf8.ValidString(got) || !strings.HasPrefix(long.Title, got) {
		t.Errorf("annotation title of %d bytes, valid %v", len(got), utf8.ValidString(got))
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := c.CheckInProgress(ctx, prTarget("perfgate (web)"))
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "listing check runs") {
		t.Errorf("err = %v, want context.Canceled, saying what was being done", err)
	}
}
