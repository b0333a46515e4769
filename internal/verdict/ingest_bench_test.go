package verdict_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
)

// BenchmarkIngest files attempts carrying a report padded to about 100 kB
// into the store of each kind, each a new run: the service's own cost of
// an ingest, without HTTP.
func BenchmarkIngest(b *testing.B) {
	r := reporttest.Pass()
	for i := 0; ; i++ {
		raw, _ := json.Marshal(r)
		if len(raw) >= 100_000 {
			break
		}
		r.Verdict.Notes = append(r.Verdict.Notes, fmt.Sprintf("a note padding the report to the size of a large plan's report (%d)", i))
	}
	rep, err := json.Marshal(r)
	if err != nil {
		b.Fatal(err)
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			svc := verdict.New(dbtest.Open(b, kind), verdict.Config{})
			ctx := context.Background()
			b.SetBytes(int64(len(rep)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c := 0
				_, err := svc.Ingest(ctx, verdict.Submission{Facts: verdict.Facts{Repository: "acme/api", Event: "push",
					HeadSHA: fmt.Sprintf("%040x", i+1), RunID: int64(i + 1), RunAttempt: 1, Attempt: 1, CPUModel: "EPYC", ExitCode: &c}, Report: rep})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
