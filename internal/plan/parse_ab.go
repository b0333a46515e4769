package plan

import (
	"fmt"

	"github.com/perfgate/perfgate/internal/judge"
)

func (ps *parser) ab(raw map[string]any) {
	m, ok := ps.Table(raw, nil, "ab", "[ab] with pairs = 4")
	if !ok {
		return
	}
	ap := []string{"ab"}
	a := &ps.p.AB
	ps.p.abWritten = true
	ps.Known(m, ap, "[ab]", append([]string{"pairs", "min_pairs", "max_pairs", "warmup", "measure", "rate", "idle", "idle_cpu", "idle_tx_per_sec"}, sameAnswersKeys...)...)
	ps.sameAnswers(m, ap, a) // parse_sameanswers.go
	ps.pairs(m, ap, a)
	if d, ok := ps.dur(m, ap, "warmup", `warmup = "10s"`, false); ok {
		a.Warmup = d
	}
	if d, ok := ps.measured(m, ap, "measure", `measure = "60s"`); ok {
		a.Measure = d
	}
	if r, ok := ps.Num(m, ap, "rate", "rate = 20", 0, true, maxRate); ok {
		a.Rate = r
	}
	if d, ok := ps.dur(m, ap, "idle", `idle = "60s"`, false); ok {
		a.Idle = d
	}
	if c, ok := ps.Num(m, ap, "idle_cpu", "idle_cpu = 2 (percent of one core)", 0, true, 10000); ok {
		a.IdleCPU = c / 100
	}
	if t, ok := ps.Num(m, ap, "idle_tx_per_sec", "idle_tx_per_sec = 1", 0, true, 1e9); ok {
		a.IdleTxPerSec = t
	}
}

// PairsAuto is how the plan asks for adaptive pairs: `pairs = "auto"`.
const PairsAuto = "auto"

// pairs reads `pairs = N`, or `pairs = "auto"` with its bounds min_pairs
// and max_pairs (judge.DefaultMinPairs and DefaultMaxPairs when absent).
// An adaptive gate's Pairs is its max_pairs: the most it may run, which
// the data sources are drawn for.
func (ps *parser) pairs(m map[string]any, ap []string, a *AB) {
	if s, isStr := m["pairs"].(string); isStr {
		if s != PairsAuto {
			ps.At(ap, "pairs", "pairs is %q; write pairs = 4 (a fixed count) or pairs = %q (adaptive)", s, PairsAuto)
			return
		}
		a.Auto = true
		a.MinPairs, a.MaxPairs = judge.DefaultMinPairs, judge.DefaultMaxPairs
	} else if n, ok := ps.Int(m, ap, "pairs", "pairs = 4", 1, 100); ok {
		a.Pairs = int(n)
	}
	for _, key := range []string{"min_pairs", "max_pairs"} {
		if _, set := m[key]; set && !a.Auto {
			ps.At(ap, key, "%s bounds adaptive pairs only; write pairs = %q beside it, or remove %s", key, PairsAuto, key)
			return
		}
	}
	if !a.Auto {
		return
	}
	if n, ok := ps.Int(m, ap, "min_pairs", "min_pairs = 4", 2, 100); ok {
		a.MinPairs = int(n)
	}
	if n, ok := ps.Int(m, ap, "max_pairs", "max_pairs = 16", 2, 100); ok {
		a.MaxPairs = int(n)
	}
	if a.MaxPairs < a.MinPairs {
		key := "max_pairs"
		if _, set := m[key]; !set {
			key = "min_pairs"
		}
		ps.At(ap, key, "max_pairs (%d) is under min_pairs (%d); write max_pairs = %d or more", a.MaxPairs, a.MinPairs, a.MinPairs)
		return
	}
	a.Pairs = a.MaxPairs
}

// judgingPairs is the pairs of the stricter of two plans (judging.go): the
// base's count as a floor. Adaptive pairs stay adaptive only when both
// plans ask for them, with the larger of each bound; otherwise the gate
// runs the larger count fixed (an adaptive plan's count is its
// max_pairs), so a head cannot turn the base's 8 fixed pairs into as few
// as min_pairs.
func judgingPairs(base, head AB) AB {
	out := head
	out.Pairs = max(base.Pairs, head.Pairs)
	if base.Auto && head.Auto {
		out.MinPairs, out.MaxPairs = max(base.MinPairs, head.MinPairs), out.Pairs
		return out
	}
	out.Auto, out.MinPairs, out.MaxPairs = false, 0, 0
	return out
}

// pairsText is the pairs as the plan writes them, for the table of
// settings the head changed: "8", or "auto" with its bounds.
func pairsText(a AB) string {
	if a.Auto {
		return fmt.Sprintf("%q (%d to %d)", PairsAuto, a.MinPairs, a.MaxPairs)
	}
	return fmt.Sprint(a.Pairs)
}
