package loadrun

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// hitLines says the hit ratio of each group and of the run under the
// plan's [load] hit rule, as notes of the summary and the report; none
// when the plan names no hit. A ratio under half is said to be mostly
// misses, as perfgate experiment flags it: cheap answers (or costly ones)
// that the latency alone does not show.
func hitLines(rule plan.HitRule, r *load.Result) []string {
	if !rule.Written() {
		return nil
	}
	rows := r.Groups
	if len(rows) > 1 {
		total := r.Total()
		total.Name = "total"
		rows = append(append([]*load.GroupStats{}, rows...), total)
	}
	var out []string
	for _, g := range rows {
		if g.Expected == 0 {
			out = append(out, fmt.Sprintf("hit ratio of %s: no expected answer to count (%s)", g.Name, rule.Says()))
			continue
		}
		hits := g.Hits
		ratio := float64(hits) / float64(g.Expected)
		line := fmt.Sprintf("hit ratio of %s: %.1f %% (%d of %d expected answers, by %s)", g.Name, 100*ratio, hits, g.Expected, rule.Says())
		if ratio < 0.5 {
			line += "; mostly misses: the latency is that of answers the cache did not serve"
		}
		if g.HitBeyond > 0 {
			line += fmt.Sprintf("; %d answers had %s past the first %d KiB of the body, which is all perfgate reads: counted as misses",
				g.HitBeyond, rule.HitField, load.MaxHitBody>>10)
		}
		out = append(out, line)
	}
	return out
}
