package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
)

// TestRunAttemptsAndPlansKeepApart: "Re-run all jobs" keeps the run id and
// raises the run attempt, and a second plan shares the run id: each is a
// judgment of its own, with its own attempts, metrics and run.
func TestRunAttemptsAndPlansKeepApart(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
		for _, tc := range []struct {
			runAttempt int
			plan       string
			exit       int
		}{{1, "", 1}, {2, "", 0}, {1, "search", 2}} {
			a := attempt("acme/api", 7, 1, "EPYC", code(tc.exit), at)
			a.Facts.RunAttempt, a.Facts.Plan = tc.runAttempt, tc.plan
			a.Metrics = []verdict.MetricPoint{{ID: "p99", Ratio: 1 + float64(tc.exit)}}
			r := verdict.Run{Repository: "acme/api", RunID: 7, RunAttempt: tc.runAttempt, Plan: tc.plan, Event: "pull_request", PR: 7,
				HeadSHA: sha(7), Verdict: verdict.WordOf(tc.exit), FinalAttempt: 1, Updated: at,
				Targets: verdict.Targets{Check: true}}
			if _, created, err := st.PutAttempt(ctx, a, &r); err != nil || !created {
				t.Fatalf("PutAttempt run attempt %d plan %q: created %v, %v", tc.runAttempt, tc.plan, created, err)
			}
		}
		for _, tc := range []struct {
			k    verdict.RunKey
			word string
		}{
			{verdict.RunKey{Repository: "acme/api", RunID: 7, RunAttempt: 1}, verdict.WordRegression},
			{verdict.RunKey{Repository: "acme/api", RunID: 7, RunAttempt: 2}, verdict.WordPass},
			{verdict.RunKey{Repository: "acme/api", RunID: 7, RunAttempt: 1, Plan: "search"}, verdict.WordCannotJudge},
		} {
			r, err := st.GetRun(ctx, tc.k)
			if err != nil || r.Verdict != tc.word || r.Key() != tc.k || !r.Targets.Check || r.Targets.Comment {
				t.Errorf("GetRun(%s) = %+v, %v; want %s with the check published", tc.k, r, err, tc.word)
			}
			a, err := st.GetAttempt(ctx, tc.k, 1)
			if err != nil || a.Facts.Key() != tc.k || len(a.Metrics) != 1 {
				t.Errorf("GetAttempt(%s, 1) = %+v, %v", tc.k, a.Facts, err)
			}
			if as, err := st.RunAttempts(ctx, tc.k); err != nil || len(as) != 1 {
				t.Errorf("RunAttempts(%s) = %d attempts, %v; want 1", tc.k, len(as), err)
			}
		}
		runs, err := st.Runs(ctx, verdict.Query{Repository: "acme/api", PR: 7})
		if err != nil || len(runs) != 3 {
			t.Errorf("Runs of the pull request: %d, %v; want the three judgments", len(runs), err)
		}
		un, err := st.Unpublished(ctx, at.Add(-time.Hour).UnixNano(), 10)
		if err != nil || len(un) != 3 {
			t.Errorf("Unpublished = %d runs, %v; want 3", len(un), err)
		}
		if un, _ := st.Unpublished(ctx, at.Add(time.Hour).UnixNano(), 10); len(un) != 0 {
			t.Errorf("Unpublished since after every update = %d runs, want none", len(un))
		}
	})
}

// TestMigrationKeepsEarlierRows: rows stored under the first schema, keyed
// on (repository, run id, attempt), read back after migration 2 under the
// run attempt they were posted with.
func TestMigrationKeepsEarlierRows(t *testing.T) {
	for _, kind := range []string{"sqlite", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			var o db.Options
			if kind == "sqlite" {
				o.DataDir = t.TempDir()
			} else {
				o.DatabaseURL = dbtest.Postgres(t)
			}
			st, err := db.Open(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			if err := st.MigrateTo(ctx, 1); err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`INSERT INTO attempts VALUES ('acme/api', 9, 1, 3, 'push', '` + sha(9) + `', '', 0, '', '', '', 'EPYC', 1, 0, 0, '', 'pass', 'final', 'passed', 'pass', 'The base is x.', 5, '{"version":1}')`,
				`INSERT INTO attempt_metrics VALUES ('acme/api', 9, 1, 'p99', 10, 11, 1.1, 0)`,
				`INSERT INTO runs VALUES ('acme/api', 9, 'push', '` + sha(9) + `', '', 0, '', '', '', 'pass', 'pass', 1, '', 1, '', 5)`,
			} {
				if _, err := st.SQL().ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			k := verdict.RunKey{Repository: "acme/api", RunID: 9, RunAttempt: 3}
			r, err := st.GetRun(ctx, k)
			if err != nil || r.Verdict != "pass" || !r.Published || !r.Targets.All() {
				t.Errorf("the run after migrating: %+v, %v; want it under run attempt 3, published", r, err)
			}
			a, err := st.GetAttempt(ctx, k, 1)
			if err != nil || a.BaseNote != "The base is x." || len(a.Metrics) != 1 || a.Metrics[0].Ratio != 1.1 {
				t.Errorf("the attempt after migrating: %+v, %v", a, err)
			}
		})
	}
}
