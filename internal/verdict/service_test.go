package verdict_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
)

const (
	epyc = "AMD EPYC 7763 64-Core Processor"
	xeon = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"
)

func sha(i int) string { return fmt.Sprintf("%040x", i) }

func code(c int) *int { return &c }

func reportJSON(t *testing.T, r *report.Report) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixture is a report whose verdict exits with c.
func fixture(t *testing.T, c int) json.RawMessage {
	switch c {
	case 0:
		return reportJSON(t, reporttest.Pass())
	case 1:
		return reportJSON(t, reporttest.Regression())
	}
	return reportJSON(t, reporttest.CannotJudge())
}

func pr(run int64, n int, model string, exit int) verdict.Submission {
	return verdict.Submission{
		Facts: verdict.Facts{Repository: "acme/api", Event: "pull_request", HeadSHA: sha(0xabc), BaseSHA: sha(0xba5e),
			PR: 42, RunID: run, RunAttempt: 1, Attempt: n, CPUModel: model, ExitCode: code(exit)},
	}
}

type fixtureService struct {
	verdict.Service
	pub *recorder
}

func newService(t *testing.T, cfg verdict.Config) fixtureService {
	t.Helper()
	pub := &recorder{failNext: map[string]bool{}}
	cfg.Publisher = pub
	clock := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	cfg.Now = func() time.Time { clock = clock.Add(time.Second); return clock }
	return fixtureService{Service: verdict.New(dbtest.Open(t, "sqlite"), cfg), pub: pub}
}

func (f fixtureService) ingest(t *testing.T, s verdict.Submission) verdict.Receipt {
	t.Helper()
	if s.Report == nil && s.Facts.ExitCode != nil {
		s.Report = fixture(t, *s.Facts.ExitCode)
	}
	rc, err := f.Ingest(context.Background(), s)
	if err != nil {
		t.Fatalf("ingesting attempt %d of run %d: %v", s.Facts.Attempt, s.Facts.RunID, err)
	}
	return rc
}

func TestRetryThenPassPublishesOnTheHead(t *testing.T) {
	f := newService(t, verdict.Config{})
	ctx := context.Background()
	rc := f.ingest(t, pr(7, 1, epyc, 2))
	if !rc.Created || rc.Attempt.Decision.Next != verdict.NextRetry || !strings.Contains(rc.Attempt.Decision.Reason, "cannot judge on "+epyc) {
		t.Fatalf("attempt 1 (exit 2): %+v", rc)
	}
	if got, want := f.pub.take(), "in_progress perfgate 0000000"; got != want {
		t.Errorf("after attempt 1 published %q, want %q", got, want)
	}
	d, err := f.Decision(ctx, verdict.RunKey{Repository: "acme/api", RunID: 7, RunAttempt: 1}, 1)
	if err != nil || d.Next != verdict.NextRetry {
		t.Errorf("Decision(1) = %+v, %v", d, err)
	}
	rc = f.ingest(t, pr(7, 2, xeon, 0))
	if rc.Attempt.Decision.Next != verdict.NextFinal || rc.Attempt.Decision.Verdict != verdict.WordPass || !rc.Published {
		t.Fatalf("attempt 2 (pass): %+v", rc)
	}
	if got, want := f.pub.take(), "completed perfgate 0000000 pass\ncomment pr 42 plan \"\""; got != want {
		t.Errorf("after the final attempt published\n%s\nwant\n%s", got, want)
	}
	summary := f.pub.outcomes[0].Summary
	for _, want := range []string{"perfgate", "### Attempts", "| 1 | " + epyc + " | cannot-judge | retry |", "| 2 | " + xeon + " | pass | final | passed |"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the summary lacks %q:\n%s", want, summary)
		}
	}
	if f.pub.comments[0] != summary {
		t.Errorf("the PR comment differs from the check's summary")
	}
	runs, err := f.Verdicts(ctx, verdict.Query{Repository: "acme/api", SHA: sha(0xabc)})
	if err != nil || len(runs) != 1 || runs[0].Verdict != verdict.WordPass || runs[0].FinalAttempt != 2 || len(runs[0].Attempts) != 2 || !runs[0].Published {
		t.Errorf("Verdicts = %+v, %v", runs, err)
	}

	// A repeat of the final attempt returns the stored one and publishes
	// nothing again: it reached GitHub.
	again := pr(7, 2, "other CPU", 0)
	rc = f.ingest(t, again)
	if rc.Created || rc.Attempt.Facts.CPUModel != xeon || !rc.Published {
		t.Errorf("the repeat: %+v", rc)
	}
	if got := f.pub.take(); got != "" {
		t.Errorf("the repeat published %q", got)
	}
}

func TestFailedPublishIsRetriedByTheRepeat(t *testing.T) {
	f := newService(t, verdict.Config{})
	f.pub.failNext["completed"] = true
	rc := f.ingest(t, pr(8, 1, epyc, 1))
	if rc.Published || !strings.Contains(rc.PublishError, "502") || rc.Attempt.Decision.Verdict != verdict.WordRegression {
		t.Fatalf("with GitHub failing: %+v", rc)
	}
	f.pub.take()
	rc = f.ingest(t, pr(8, 1, epyc, 1))
	if rc.Created || !rc.Published || rc.PublishError != "" {
		t.Fatalf("the repeat after GitHub came back: %+v", rc)
	}
	if got, want := f.pub.take(), "completed perfgate 0000000 regression\ncomment pr 42 plan \"\""; got != want {
		t.Errorf("the repeat published %q, want %q", got, want)
	}
	o := f.pub.outcomes[0]
	if !strings.HasPrefix(o.Title, "regression: ") || len(o.Annotations) == 0 || o.Annotations[0].Path != "perf/plan.toml" || !strings.Contains(o.Annotations[0].Title, "search") {
		t.Errorf("the regression's outcome: title %q, annotations %+v", o.Title, o.Annotations)
	}
}

func TestRetryRules(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cfg        verdict.Config
		attempts   []verdict.Submission
		wantNext   string
		wantWord   string
		wantReason string
		wantTitle  string
	}{
		{name: "regression on a stall-prone model retries", cfg: verdict.Config{StallProne: []string{epyc}},
			attempts: []verdict.Submission{pr(1, 1, epyc, 1)}, wantNext: verdict.NextRetry, wantReason: "stall-prone"},
		{name: "regression elsewhere is final", cfg: verdict.Config{StallProne: []string{epyc}},
			attempts: []verdict.Submission{pr(1, 1, xeon, 1)}, wantNext: verdict.NextFinal, wantWord: verdict.WordRegression, wantTitle: "regression: "},
		{name: "cannot judge after the last retry fails as cannot judge",
			attempts: []verdict.Submission{pr(1, 1, epyc, 2), pr(1, 2, epyc, 2), pr(1, 3, xeon, 2)},
			wantNext: verdict.NextFinal, wantWord: verdict.WordCannotJudge, wantReason: "at most 2 retries", wantTitle: "cannot judge: "},
		{name: "no retries configured", cfg: verdict.Config{MaxRetries: -1},
			attempts: []verdict.Submission{pr(1, 1, epyc, 2)}, wantNext: verdict.NextFinal, wantWord: verdict.WordCannotJudge},
		{name: "the last attempt that ran decides", attempts: func() []verdict.Submission {
			lost := pr(1, 2, xeon, 0)
			lost.Facts.ExitCode = nil
			cancelled := pr(1, 3, xeon, 0)
			cancelled.Facts.ExitCode, cancelled.Facts.WorkflowCancelled = nil, true
			return []verdict.Submission{pr(1, 1, epyc, 2), lost, cancelled}
		}(), wantNext: verdict.NextFinal, wantWord: verdict.WordCannotJudge, wantReason: "cancelled"},
		// A gate killed (137) or crashed leaves no report; its exit code
		// is no verdict, so it retries like an exit 2 rather than being
		// refused for the report it could not write.
		{name: "a killed attempt without its report retries", attempts: func() []verdict.Submission {
			killed := pr(1, 1, epyc, 137)
			killed.Report = json.RawMessage(`null`)
			return []verdict.Submission{killed}
		}(), wantNext: verdict.NextRetry, wantReason: "exit code 137 is not a verdict"},
		{name: "a killed attempt's retry decides", attempts: func() []verdict.Submission {
			killed := pr(1, 1, epyc, 137)
			killed.Report = json.RawMessage(`null`)
			return []verdict.Submission{killed, pr(1, 2, xeon, 0)}
		}(), wantNext: verdict.NextFinal, wantWord: verdict.WordPass, wantTitle: "pass"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newService(t, tc.cfg)
			var rc verdict.Receipt
			for _, s := range tc.attempts {
				rc = f.ingest(t, s)
			}
			d := rc.Attempt.Decision
			if d.Next != tc.wantNext || d.Verdict != tc.wantWord || !strings.Contains(d.Reason, tc.wantReason) {
				t.Errorf("decision %+v, want next %s verdict %q reason with %q", d, tc.wantNext, tc.wantWord, tc.wantReason)
			}
			if tc.wantTitle != "" {
				runs, _ := f.Verdicts(context.Background(), verdict.Query{Repository: "acme/api", PR: 42})
				if len(runs) != 1 || !strings.HasPrefix(runs[0].Title, tc.wantTitle) {
					t.Errorf("runs %+v, want a title starting %q", runs, tc.wantTitle)
				}
			}
		})
	}
}

func TestStallProneLearnedFromHistory(t *testing.T) {
	f := newService(t, verdict.Config{Learn: verdict.Learn{Window: 50, Share: 0.3, MinAttempts: 10}})
	ctx := context.Background()
	// 10 runs on xeon: 4 cannot judge, then pass. 4 of 14 attempts is
	// 29 %: not yet over 30 %.
	run := int64(100)
	for i := 0; i < 10; i++ {
		run++
		if i < 4 {
			f.ingest(t, pr(run, 1, xeon, 2))
			f.ingest(t, pr(run, 2, epyc, 0))
			continue
		}
		f.ingest(t, pr(run, 1, xeon, 0))
	}
	ms, err := f.Models(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 2 || ms[1].CPUModel != xeon || ms[1].Attempts != 10 || ms[1].Exit2 != 4 || !ms[1].StallProne {
		t.Fatalf("models %+v: want xeon learned stall-prone at 4 of 10", ms)
	}
	if !strings.HasPrefix(ms[1].Why, "learned: 4 of its last 10 attempts (40 %) could not be judged") {
		t.Errorf("xeon's why: %q", ms[1].Why)
	}
	if ms[0].StallProne || !strings.Contains(ms[0].Why, "fewer than the 10 attempts") {
		t.Errorf("epyc: %+v", ms[0])
	}
	rc := f.ingest(t, pr(200, 1, xeon, 1))
	if rc.Attempt.Decision.Next != verdict.NextRetry || !strings.Contains(rc.Attempt.Decision.Reason, "stall-prone") {
		t.Errorf("a regression on the learned model: %+v, want a retry", rc.Attempt.Decision)
	}
	rc = f.ingest(t, pr(201, 1, epyc, 1))
	if rc.Attempt.Decision.Next != verdict.NextFinal {
		t.Errorf("a regression on another model: %+v, want final", rc.Attempt.Decision)
	}
}

func TestMergeGroupAndPlanTargets(t *testing.T) {
	f := newService(t, verdict.Config{})
	s := pr(9, 1, epyc, 0)
	s.Facts.Event, s.Facts.PR, s.Facts.MergeGroupSHA, s.Facts.Plan = "merge_group", 0, sha(0xfeed), "checkout"
	f.ingest(t, s)
	if got, want := f.pub.take(), "in_progress perfgate (checkout) 0000000\ncompleted perfgate (checkout) 0000000 pass"; got != want {
		t.Errorf("merge group published\n%s\nwant\n%s", got, want)
	}
	runs, err := f.Verdicts(context.Background(), verdict.Query{Repository: "acme/api", MergeGroupSHA: sha(0xfeed)})
	if err != nil || len(runs) != 1 || runs[0].Plan != "checkout" {
		t.Errorf("by merge group: %+v, %v", runs, err)
	}
}

func TestReleaseLine(t *testing.T) {
	f := newService(t, verdict.Config{})
	ctx := context.Background()
	rel := pr(20, 1, epyc, 0)
	rel.Facts.Event, rel.Facts.PR, rel.Facts.Tag = "release", 0, "v1.4.0"
	f.ingest(t, rel)
	want := "Performance: The base is `4f1c2a9e8d7b`, the merge base with main."
	if got := f.pub.take(); !strings.Contains(got, "release acme/api v1.4.0 plan \"\" "+want) {
		t.Errorf("the release published %q", got)
	}
	line, err := f.ReleaseLine(ctx, "acme/api", "v1.4.0", "")
	if err != nil || line != want {
		t.Errorf("ReleaseLine = %q, %v", line, err)
	}

	noBase := pr(21, 1, epyc, 0)
	noBase.Facts.Event, noBase.Facts.PR, noBase.Facts.Tag, noBase.Facts.BaseSHA = "release", 0, "v1.5.0", ""
	f.ingest(t, noBase)
	if got := f.pub.take(); strings.Contains(got, "release ") {
		t.Errorf("a release whose gate named no base published %q", got)
	}
	if _, err := f.ReleaseLine(ctx, "acme/api", "v1.5.0", ""); !errors.Is(err, verdict.ErrNoBase) {
		t.Errorf("ReleaseLine without a base: %v, want ErrNoBase", err)
	}
	pending := pr(22, 1, epyc, 2)
	pending.Facts.Event, pending.Facts.PR, pending.Facts.Tag = "release", 0, "v1.6.0"
	f.ingest(t, pending)
	if _, err := f.ReleaseLine(ctx, "acme/api", "v1.6.0", ""); !errors.Is(err, verdict.ErrNotFinal) {
		t.Errorf("ReleaseLine before the final attempt: %v, want ErrNotFinal", err)
	}
	if _, err := f.ReleaseLine(ctx, "acme/api", "v9", ""); !errors.Is(err, verdict.ErrNotFound) {
		t.Errorf("ReleaseLine of an unknown tag: %v, want ErrNotFound", err)
	}
}

func TestIngestRefusesBadInput(t *testing.T) {
	f := newService(t, verdict.Config{})
	for _, tc := range []struct {
		field  string
		change func(s *verdict.Submission)
	}{
		{"facts.repository", func(s *verdict.Submission) { s.Facts.Repository = "acme" }},
		{"facts.event", func(s *verdict.Submission) { s.Facts.Event = "schedule" }},
		{"facts.head_sha", func(s *verdict.Submission) { s.Facts.HeadSHA = "abc" }},
		{"facts.run_id", func(s *verdict.Submission) { s.Facts.RunID = 0 }},
		{"facts.attempt", func(s *verdict.Submission) { s.Facts.Attempt = 0 }},
		{"facts.pr", func(s *verdict.Submission) { s.Facts.PR = 0 }},
		{"facts.merge_group_head_sha", func(s *verdict.Submission) { s.Facts.Event = "merge_group" }},
		{"facts.tag", func(s *verdict.Submission) { s.Facts.Event = "release" }},
		{"facts.exit_code", func(s *verdict.Submission) { s.Report = fixture(t, 1) }},
		{"report", func(s *verdict.Submission) { s.Report = json.RawMessage(`null`) }},
		{"report.version", func(s *verdict.Submission) { s.Report = json.RawMessage(`{"version": 99}`) }},
	} {
		s := pr(1, 1, epyc, 0)
		s.Report = fixture(t, 0)
		tc.change(&s)
		_, err := f.Ingest(context.Background(), s)
		var in *verdict.InputError
		if !errors.As(err, &in) || in.Field != tc.field {
			t.Errorf("%s: error %v, want an InputError on that field", tc.field, err)
		}
	}
	if got := f.pub.take(); got != "" {
		t.Errorf("refused attempts published %q", got)
	}
}

// TestPublishRetryRedoesOnlyWhatFailed: the check completed and the
// comment failed; the repeat writes the comment alone, so the head keeps
// one completed check run.
func TestPublishRetryRedoesOnlyWhatFailed(t *testing.T) {
	f := newService(t, verdict.Config{})
	f.pub.failNext["comment"] = true
	rc := f.ingest(t, pr(8, 1, epyc, 1))
	if rc.Published || !strings.Contains(rc.PublishError, "writing the comment") {
		t.Fatalf("with the comment failing: %+v", rc)
	}
	if got, want := f.pub.take(), "in_progress perfgate 0000000\ncompleted perfgate 0000000 regression"; got != want {
		t.Errorf("first publish %q, want %q", got, want)
	}
	rc = f.ingest(t, pr(8, 1, epyc, 1))
	if !rc.Published {
		t.Fatalf("the repeat: %+v", rc)
	}
	if got, want := f.pub.take(), "comment pr 42 plan \"\""; got != want {
		t.Errorf("the repeat published %q, want the comment alone %q", got, want)
	}
}

// TestReRunIsJudgedAnew: "Re-run all jobs" keeps the run id and raises the
// run attempt; its attempts are new, and its final verdict publishes again.
func TestReRunIsJudgedAnew(t *testing.T) {
	f := newService(t, verdict.Config{})
	ctx := context.Background()
	f.ingest(t, pr(30, 1, epyc, 1))
	f.pub.take()
	again := pr(30, 1, epyc, 0)
	again.Facts.RunAttempt = 2
	rc := f.ingest(t, again)
	if !rc.Created || rc.Attempt.Decision.Verdict != verdict.WordPass || !rc.Published {
		t.Fatalf("attempt 1 of run attempt 2: %+v, want it stored and final", rc)
	}
	if got, want := f.pub.take(), "in_progress perfgate 0000000\ncompleted perfgate 0000000 pass\ncomment pr 42 plan \"\""; got != want {
		t.Errorf("the re-run published\n%s\nwant\n%s", got, want)
	}
	for _, tc := range []struct {
		runAttempt int
		next, word string
	}{{1, verdict.NextFinal, verdict.WordRegression}, {2, verdict.NextFinal, verdict.WordPass}} {
		d, err := f.Decision(ctx, verdict.RunKey{Repository: "acme/api", RunID: 30, RunAttempt: tc.runAttempt}, 1)
		if err != nil || d.Next != tc.next || d.Verdict != tc.word {
			t.Errorf("run attempt %d's decision %+v, %v; want %s %s", tc.runAttempt, d, err, tc.next, tc.word)
		}
	}
	runs, _ := f.Verdicts(ctx, verdict.Query{Repository: "acme/api", PR: 42})
	if len(runs) != 2 || runs[0].RunAttempt != 2 || runs[0].Verdict != verdict.WordPass {
		t.Errorf("verdicts of the pull request %+v, want the re-run's pass first", runs)
	}
}

// TestTwoPlansInOneRun: each plan has its check, its comment, its attempts.
func TestTwoPlansInOneRun(t *testing.T) {
	f := newService(t, verdict.Config{})
	f.ingest(t, pr(31, 1, epyc, 0))
	search := pr(31, 1, epyc, 1)
	search.Facts.Plan = "search"
	rc := f.ingest(t, search)
	if !rc.Created || rc.Attempt.Decision.Verdict != verdict.WordRegression {
		t.Fatalf("the second plan's attempt 1: %+v, want it stored apart", rc)
	}
	want := "in_progress perfgate 0000000\ncompleted perfgate 0000000 pass\ncomment pr 42 plan \"\"\n" +
		"in_progress perfgate (search) 0000000\ncompleted perfgate (search) 0000000 regression\ncomment pr 42 plan \"search\""
	if got := f.pub.take(); got != want {
		t.Errorf("two plans published\n%s\nwant\n%s", got, want)
	}
}

// TestReleaseLineWaitsForTheRelease: the release is not there yet, so the
// line waits; Republish writes it once the release exists, and only it.
func TestReleaseLineWaitsForTheRelease(t *testing.T) {
	f := newService(t, verdict.Config{})
	ctx := context.Background()
	f.pub.noRelease = true
	rel := pr(40, 1, epyc, 0)
	rel.Facts.Event, rel.Facts.PR, rel.Facts.Tag = "release", 0, "v2.0.0"
	rc := f.ingest(t, rel)
	if rc.Published || !strings.Contains(rc.PublishError, verdict.ErrNoRelease.Error()) {
		t.Fatalf("before the release exists: %+v", rc)
	}
	f.pub.take()
	if n, err := f.Republish(ctx, time.Time{}); err != nil || n != 0 {
		t.Errorf("Republish with the release still missing: %d, %v", n, err)
	}
	f.pub.noRelease = false
	if n, err := f.Republish(ctx, time.Time{}); err != nil || n != 1 {
		t.Errorf("Republish once the release exists: %d, %v; want 1", n, err)
	}
	if got := f.pub.take(); !strings.HasPrefix(got, "release acme/api v2.0.0 plan \"\" Performance: ") || strings.Contains(got, "completed") {
		t.Errorf("Republish published %q, want the release line alone", got)
	}
	if n, _ := f.Republish(ctx, time.Time{}); n != 0 || f.pub.take() != "" {
		t.Errorf("a second Republish published again")
	}
	if line, err := f.ReleaseLine(ctx, "acme/api", "v2.0.0", ""); err != nil || !strings.HasPrefix(line, "Performance: ") {
		t.Errorf("ReleaseLine = %q, %v", line, err)
	}
}
