package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/judge"
)

// latencyCharts draws, for p50 and for p99, a Mermaid xychart of every
// group's latency in every pair: bars for the base, a line for the head
// (xychart-beta draws no legend, so the two must differ in kind).
func latencyCharts(r *Report) string {
	var b strings.Builder
	// The median and the furthest tail the judge measures.
	for _, q := range []judge.Percentile{judge.Percentiles[0], judge.Percentiles[len(judge.Percentiles)-1]} {
		groups := groupsOf(r, q)
		if len(groups) == 0 || len(r.Input.Base) == 0 || len(r.Input.Base) != len(r.Input.Head) {
			continue
		}
		var labels []string
		var base, head []float64
		for _, g := range groups {
			id := judge.LatencyMetric(q, g).ID
			for i := range r.Input.Base {
				labels = append(labels, strconv.Quote(fmt.Sprintf("%s %d", chartLabel(g), r.Input.Base[i].Pair)))
				base = append(base, r.Input.Base[i].Values[id])
				head = append(head, r.Input.Head[i].Values[id])
			}
		}
		top := 0.0
		for _, v := range append(append([]float64(nil), base...), head...) {
			top = math.Max(top, v)
		}
		fmt.Fprintf(&b, "```mermaid\nxychart-beta\n")
		fmt.Fprintf(&b, "    title \"%s latency per group and pair (ms): bars base, line head\"\n", q.Name)
		fmt.Fprintf(&b, "    x-axis [%s]\n", strings.Join(labels, ", "))
		fmt.Fprintf(&b, "    y-axis \"ms\" 0 --> %s\n", chartNum(niceTop(top)))
		fmt.Fprintf(&b, "    bar [%s]\n", chartNums(base))
		fmt.Fprintf(&b, "    line [%s]\n", chartNums(head))
		fmt.Fprintf(&b, "```\n\n")
	}
	return b.String()
}

// groupsOf lists the groups that have a latency metric of percentile q,
// sorted.
func groupsOf(r *Report, q judge.Percentile) []string {
	var gs []string
	for _, m := range r.Input.Metrics {
		if p, g, ok := judge.SplitLatencyID(m.ID); ok && p == q {
			gs = append(gs, g)
		}
	}
	sort.Strings(gs)
	return gs
}

// chartLabel keeps a group name from closing Mermaid's quotes.
func chartLabel(s string) string {
	return strings.NewReplacer(`"`, "'", "\n", " ", "`", "'").Replace(s)
}

// niceTop rounds a chart's top up to 1, 2 or 5 times a power of ten.
func niceTop(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

func chartNums(vs []float64) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = chartNum(v)
	}
	return strings.Join(s, ", ")
}

// chartNum writes a number Mermaid reads: plain decimals, no exponent.
func chartNum(v float64) string {
	s := strconv.FormatFloat(v, 'f', 3, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" {
		return "0"
	}
	return s
}
