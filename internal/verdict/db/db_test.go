package db_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
)

// eachStore runs body against a migrated SQLite store and a migrated
// PostgreSQL store: one suite, both stores.
func eachStore(t *testing.T, body func(t *testing.T, st *db.DB)) {
	t.Helper()
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			body(t, dbtest.Open(t, kind))
		})
	}
}

func sha(i int) string { return fmt.Sprintf("%040x", i) }

func code(c int) *int { return &c }

// key is the judgment of run's first run attempt of the default plan.
func key(repo string, run int64) verdict.RunKey {
	return verdict.RunKey{Repository: repo, RunID: run, RunAttempt: 1}
}

func attempt(repo string, run int64, n int, model string, exit *int, at time.Time) *verdict.Attempt {
	return &verdict.Attempt{
		Facts: verdict.Facts{Repository: repo, Event: "pull_request", HeadSHA: sha(int(run)), PR: 7,
			RunID: run, RunAttempt: 1, Attempt: n, CPUModel: model, ExitCode: exit},
		Verdict:  "pass",
		Decision: verdict.Decision{Next: verdict.NextFinal, Reason: "passed", Verdict: "pass"},
		Received: at,
		Report:   []byte(`{"version":1}`),
	}
}

func TestMigrateTwice(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		applied, err := st.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(applied) != 0 {
			t.Errorf("a second Migrate applied %v, want nothing", applied)
		}
		v, err := st.SchemaVersion(ctx)
		if err != nil || v != db.LatestVersion() || v < 1 {
			t.Errorf("SchemaVersion = %d, %v; want %d", v, err, db.LatestVersion())
		}
	})
}

func TestPutAttemptIsIdempotent(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 3, 10, 0, 0, 123, time.UTC)
		a := attempt("acme/api", 11, 1, "EPYC", code(0), at)
		a.Metrics = []verdict.MetricPoint{{ID: "p99.search", Base: 10, Head: 13, Ratio: 1.3, Fail: true}, {ID: "throughput", Base: 20, Head: 20, Ratio: 1}}
		got, created, err := st.PutAttempt(ctx, a, nil)
		if err != nil || !created {
			t.Fatalf("first PutAttempt: created %v, %v", created, err)
		}
		if got.Facts.CPUModel != "EPYC" || *got.Facts.ExitCode != 0 || !got.Received.Equal(at) || len(got.Metrics) != 2 || !got.Metrics[0].Fail || string(got.Report) != `{"version":1}` {
			t.Errorf("stored %+v", got)
		}
		again := attempt("acme/api", 11, 1, "Xeon", code(1), at.Add(time.Hour))
		run := &verdict.Run{Repository: "acme/api", RunID: 11, RunAttempt: 1, Event: "pull_request", HeadSHA: sha(11), Verdict: "regression", Updated: at}
		got2, created, err := st.PutAttempt(ctx, again, run)
		if err != nil || created {
			t.Fatalf("repeat PutAttempt: created %v, %v", created, err)
		}
		if got2.Facts.CPUModel != "EPYC" || *got2.Facts.ExitCode != 0 {
			t.Errorf("the repeat returned %+v, want the stored attempt", got2.Facts)
		}
		if _, err := st.GetRun(ctx, key("acme/api", 11)); !errors.Is(err, verdict.ErrNotFound) {
			t.Errorf("a repeat wrote its run: %v", err)
		}
		if _, err := st.GetAttempt(ctx, key("acme/api", 11), 2); !errors.Is(err, verdict.ErrNotFound) {
			t.Errorf("GetAttempt of an absent attempt: %v, want ErrNotFound", err)
		}
		none := attempt("acme/api", 11, 2, "EPYC", nil, at)
		none.Report = nil
		got3, _, err := st.PutAttempt(ctx, none, run)
		if r, err := st.GetRun(ctx, key("acme/api", 11)); err != nil || r.Verdict != "regression" {
			t.Errorf("the run written with attempt 2: %+v, %v", r, err)
		}
		if got3, err := st.GetAttempt(ctx, key("acme/api", 11), 2); err != nil || got3.Facts.ExitCode != nil || got3.Report != nil {
			t.Errorf("read back, an attempt without exit code is %+v, %v", got3, err)
		}
		if err != nil || got3.Facts.ExitCode != nil || got3.Report != nil {
			t.Errorf("an attempt without exit code came back %+v, %v", got3, err)
		}
		as, err := st.RunAttempts(ctx, key("acme/api", 11))
		if err != nil || len(as) != 2 || as[0].Facts.Attempt != 1 || as[1].Facts.Attempt != 2 {
			t.Errorf("RunAttempts = %v, %v", as, err)
		}
	})
}

func TestConcurrentRepeatsStoreOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		var wg sync.WaitGroup
		var mu sync.Mutex
		created, errs := 0, []error{}
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				_, c, err := st.PutAttempt(ctx, attempt("acme/api", 5, 1, fmt.Sprint("model-", i), code(0), time.Now()), nil)
				mu.Lock()
				defer mu.Unlock()
				if c {
					created++
				}
				if err != nil {
					errs = append(errs, err)
				}
			}(i)
		}
		wg.Wait()
		if created != 1 || len(errs) > 0 {
			t.Errorf("8 racing PutAttempts: %d created, errors %v; want 1 and none", created, errs)
		}
	})
}

func TestRunsByEveryKey(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
		runs := []verdict.Run{
			{Repository: "acme/api", RunID: 1, RunAttempt: 1, Event: "pull_request", HeadSHA: sha(1), PR: 7, Verdict: "pass", FinalAttempt: 1, Updated: t0},
			{Repository: "acme/api", RunID: 2, RunAttempt: 1, Event: "merge_group", HeadSHA: sha(2), MergeGroupSHA: sha(20), Verdict: "regression", FinalAttempt: 1, Updated: t0.Add(time.Minute)},
			{Repository: "acme/api", RunID: 3, RunAttempt: 1, Event: "release", HeadSHA: sha(3), BaseSHA: sha(30), Tag: "v1.2.0", Verdict: "pass", ReleaseLine: "Performance: The base is x.", Published: true, FinalAttempt: 1, Updated: t0.Add(2 * time.Minute)},
			{Repository: "acme/api", RunID: 4, RunAttempt: 1, Event: "pull_request", HeadSHA: sha(4), PR: 7, Verdict: verdict.WordPending, Updated: t0.Add(3 * time.Minute)},
			{Repository: "other/svc", RunID: 1, RunAttempt: 1, Event: "push", HeadSHA: sha(1), Verdict: "pass", Updated: t0},
		}
		for i := range runs {
			if err := st.PutRun(ctx, &runs[i]); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := st.PutAttempt(ctx, attempt("acme/api", 1, 1, "EPYC", code(0), t0), nil); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			q    verdict.Query
			want []int64
		}{
			{"by head sha", verdict.Query{Repository: "acme/api", SHA: sha(1)}, []int64{1}},
			{"sha finds the merge group head", verdict.Query{Repository: "acme/api", SHA: sha(20)}, []int64{2}},
			{"by merge group", verdict.Query{Repository: "acme/api", MergeGroupSHA: sha(20)}, []int64{2}},
			{"by pr, newest first", verdict.Query{Repository: "acme/api", PR: 7}, []int64{4, 1}},
			{"by tag", verdict.Query{Repository: "acme/api", Tag: "v1.2.0"}, []int64{3}},
			{"another repository's sha", verdict.Query{Repository: "other/svc", SHA: sha(1)}, []int64{1}},
			{"nothing", verdict.Query{Repository: "acme/api", SHA: sha(99)}, nil},
		} {
			got, err := st.Runs(ctx, tc.q)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			var ids []int64
			for _, r := range got {
				ids = append(ids, r.RunID)
			}
			if fmt.Sprint(ids) != fmt.Sprint(tc.want) {
				t.Errorf("%s: runs %v, want %v", tc.name, ids, tc.want)
			}
		}
		r, err := st.GetRun(ctx, key("acme/api", 3))
		if err != nil || r.ReleaseLine != "Performance: The base is x." || !r.Published || r.BaseSHA != sha(30) || !r.Updated.Equal(t0.Add(2*time.Minute)) {
			t.Errorf("GetRun = %+v, %v", r, err)
		}
		r1, err := st.Runs(ctx, verdict.Query{Repository: "acme/api", SHA: sha(1)})
		if err != nil || len(r1) != 1 || len(r1[0].Attempts) != 1 || r1[0].Attempts[0].CPUModel != "EPYC" {
			t.Errorf("Runs lists attempts %+v, %v", r1, err)
		}
		runs[3].Verdict = "pass"
		if err := st.PutRun(ctx, &runs[3]); err != nil {
			t.Fatal(err)
		}
		if r, _ := st.GetRun(ctx, key("acme/api", 4)); r.Verdict != "pass" {
			t.Errorf("PutRun did not replace the verdict: %q", r.Verdict)
		}
		latest, err := st.Latest(ctx, "acme/api", 2)
		if err != nil || len(latest) != 2 || latest[0].RunID != 4 {
			t.Errorf("Latest = %v, %v", latest, err)
		}
		repos, err := st.Repositories(ctx)
		if err != nil || strings.Join(repos, ",") != "acme/api,other/svc" {
			t.Errorf("Repositories = %v, %v", repos, err)
		}
		if _, err := st.GetRun(ctx, key("acme/api", 99)); !errors.Is(err, verdict.ErrNotFound) {
			t.Errorf("GetRun of an absent run: %v", err)
		}
	})
}

func TestModelsCountTheLastWindow(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
		// 60 attempts on EPYC: the oldest 10 all exit 2, then 50 of which
		// every 5th exits 2. The window of 50 sees only the latter.
		for i := 0; i < 60; i++ {
			c := 0
			if i < 10 || i%5 == 0 {
				c = 2
			}
			a := attempt("acme/api", int64(100+i), 1, "EPYC", code(c), t0.Add(time.Duration(i)*time.Second))
			if _, _, err := st.PutAttempt(ctx, a, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := st.PutAttempt(ctx, attempt("other/svc", 1, 1, "Xeon", nil, t0), nil); err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.PutAttempt(ctx, attempt("other/svc", 2, 1, "", code(2), t0), nil); err != nil {
			t.Fatal(err)
		}
		ms, err := st.Models(ctx, 50)
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(ms)
		want := fmt.Sprint([]verdict.ModelStat{{CPUModel: "EPYC", Attempts: 50, Exit2: 10}, {CPUModel: "Xeon", Attempts: 1, Exit2: 0}})
		if got != want {
			t.Errorf("Models(50) = %s, want %s", got, want)
		}
		one, err := st.ModelWindow(ctx, "EPYC", 50)
		if err != nil || one.Attempts != 50 || one.Exit2 != 10 {
			t.Errorf("ModelWindow(EPYC, 50) = %+v, %v", one, err)
		}
		if none, err := st.ModelWindow(ctx, "Graviton", 50); err != nil || none.Attempts != 0 {
			t.Errorf("ModelWindow of a model never seen = %+v, %v", none, err)
		}
	})
}

func TestTrendsAndTokens(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
		for i := 1; i <= 3; i++ {
			a := attempt("acme/api", int64(i), 1, "EPYC", code(0), t0)
			a.Metrics = []verdict.MetricPoint{{ID: "p99.search", Ratio: 1 + float64(i)/10}, {ID: "throughput", Ratio: 1}}
			if _, _, err := st.PutAttempt(ctx, a, nil); err != nil {
				t.Fatal(err)
			}
			r := verdict.Run{Repository: "acme/api", RunID: int64(i), RunAttempt: 1, Event: "push", HeadSHA: sha(i), Verdict: "pass", FinalAttempt: 1, Updated: t0.Add(time.Duration(i) * time.Minute)}
			if i == 3 {
				r.Verdict, r.FinalAttempt = verdict.WordPending, 0
			}
			if err := st.PutRun(ctx, &r); err != nil {
				t.Fatal(err)
			}
		}
		pts, err := st.Trends(ctx, "acme/api", 30)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range pts {
			got = append(got, fmt.Sprintf("%d:%s:%.1f", p.RunID, p.Metric, p.Ratio))
		}
		if want := "1:p99.search:1.1 1:throughput:1.0 2:p99.search:1.2 2:throughput:1.0"; strings.Join(got, " ") != want {
			t.Errorf("Trends = %v, want %s (the pending run has no final attempt)", got, want)
		}
		if _, err := st.TokenRepository(ctx, "abc"); !errors.Is(err, verdict.ErrNotFound) {
			t.Errorf("an unknown token: %v", err)
		}
		if err := st.PutTokenHash(ctx, "acme/api", "abc"); err != nil {
			t.Fatal(err)
		}
		if repo, err := st.TokenRepository(ctx, "abc"); err != nil || repo != "acme/api" {
			t.Errorf("TokenRepository = %q, %v", repo, err)
		}
	})
}

func TestOpenRefusesNoStore(t *testing.T) {
	_, err := db.Open(context.Background(), db.Options{})
	if err == nil || !strings.Contains(err.Error(), "--data") {
		t.Errorf("Open with nothing: %v, want a message naming --data", err)
	}
}
