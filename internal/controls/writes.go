package controls

import (
	"context"
	"fmt"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/plan"
)

// WritesResult is the store-write accounting of one group.
type WritesResult = judge.WritesResult

// Answers sums the requests of group the arm answered as expected in its
// phases: those finished, less wrong statuses, failures and wrong answers
// (an expected status whose body, JSON or header the plan's expect_body,
// expect_json or expect_header refuses). A request answered wrongly may
// have written nothing, so counting it would fail a head whose store kept
// a write for every answer it got right.
func Answers(phases []judge.Phase, group string) int64 {
	var n int64
	for _, ph := range phases {
		for _, g := range ph.Groups {
			if g.Name != group {
				continue
			}
			bad := uint64(0)
			for _, c := range g.WrongStatus {
				bad += c
			}
			for _, c := range g.Failed {
				bad += c
			}
			bad += g.WrongAnswers
			if g.Requests > bad {
				n += int64(g.Requests - bad)
			}
		}
	}
	return n
}

// StoreWrites reads the table's writes in the head's store database and
// compares them with the answers. Call it after the store's statistics
// settled (armdb.FlushWait after the last request).
func StoreWrites(ctx context.Context, w plan.StoreWrites, answers int64, dsn string) (WritesResult, error) {
	r := WritesResult{Group: w.Group, Table: w.Table, Answers: answers}
	if dsn == "" {
		return r, fmt.Errorf("store writes of %s: the head has no store; run the gate with a store", w.Table)
	}
	n, err := armdb.TableWrites(ctx, dsn, w.Table)
	if err != nil {
		return r, fmt.Errorf("store writes of %s: %w", w.Table, err)
	}
	r.Writes = n
	r.Fail = r.Writes < r.Answers
	return r, nil
}
