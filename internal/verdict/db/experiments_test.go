package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
)

func TestExperimentsJudgedAgainstTheDefaultBranch(t *testing.T) {
	eachStore(t, func(t *testing.T, st *db.DB) {
		ctx := context.Background()
		knee := func(v float64) *float64 { return &v }
		put := func(branch string, def bool, commit int, k *float64) (int64, *verdict.Experiment) {
			t.Helper()
			id, prev, err := st.PutExperiment(ctx, &verdict.Experiment{Repository: "acme/api", Target: "https://staging", Branch: branch,
				DefaultBranch: def, CommitSHA: sha(commit), Received: time.Unix(1700000000, 0), Knee: k, FirstResource: "pool", Verdict: "answered", Report: []byte(`{}`)})
			if err != nil {
				t.Fatal(err)
			}
			return id, prev
		}
		if _, prev := put("main", true, 1, knee(700)); prev != nil {
			t.Errorf("the first experiment has a previous: %+v", prev)
		}
		// A branch's experiment is kept but judged nothing against.
		put("feature", false, 2, knee(100))
		id, prev := put("main", true, 3, knee(490))
		if prev == nil || *prev.Knee != 700 || prev.CommitSHA != sha(1) || !prev.DefaultBranch {
			t.Errorf("previous %+v, want the default branch's 700/s", prev)
		}
		es, err := st.Experiments(ctx, "acme/api", "https://staging", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(es) != 3 || es[2].ID != id || *es[2].Knee != 490 || es[1].Branch != "feature" || es[0].FirstResource != "pool" {
			t.Errorf("experiments %+v", es)
		}
		if es, _ := st.Experiments(ctx, "acme/api", "https://other", 10); len(es) != 0 {
			t.Errorf("another target's experiments: %+v", es)
		}
	})
}
