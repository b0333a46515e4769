package pairs

import (
	"fmt"
	"io"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// LoadNotes are the remarks a single-target run (perfgate load) carries
// into its summary and report: each data source that ran out and repeated
// values, so the figures measured a primed cache.
func LoadNotes(src load.Source) []string {
	if n, ok := src.(noter); ok {
		return n.Notes()
	}
	return nil
}

// LoadThresholds judges the plan's [[threshold]] limits on one target's
// run, as k6 does with its thresholds.
func LoadThresholds(p *plan.Plan, r *load.Result) []judge.ThresholdResult {
	names := make([]string, len(p.Groups))
	for i, g := range p.Groups {
		names[i] = g.Name
	}
	return judge.JudgeThresholds(plan.Limits(p.Thresholds), r.Groups, names)
}

// WriteLoadVerdict writes the notes and the thresholds' lines under a load
// summary and returns exit 1 naming the breached thresholds, if any.
func WriteLoadVerdict(w io.Writer, notes []string, ths []judge.ThresholdResult) error {
	for _, n := range notes {
		if _, err := fmt.Fprintf(w, "note: %s\n", n); err != nil {
			return fmt.Errorf("writing the load notes: %w", err)
		}
	}
	var failed []judge.ThresholdResult
	for _, t := range ths {
		mark := "ok"
		if t.Fail {
			mark = "FAIL"
			failed = append(failed, t)
		}
		if _, err := fmt.Fprintf(w, "%s %s\n", t.Says, mark); err != nil {
			return fmt.Errorf("writing the thresholds: %w", err)
		}
	}
	switch len(failed) {
	case 0:
		return nil
	case 1:
		return exit.Regressionf("perfgate load: %s", failed[0].Says)
	default:
		return exit.Regressionf("perfgate load: %d of %d thresholds breached, first %s", len(failed), len(ths), failed[0].Says)
	}
}

// ThresholdLines are the thresholds as the load report's notes hold them.
func ThresholdLines(ths []judge.ThresholdResult) []string {
	var out []string
	for _, t := range ths {
		mark := "ok"
		if t.Fail {
			mark = "FAIL"
		}
		out = append(out, t.Says+" "+mark)
	}
	return out
}
