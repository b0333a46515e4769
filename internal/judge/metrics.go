package judge

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// This file is the judge's vocabulary: the verdict codes, the metric IDs
// and their classes, the default tolerances, the idle limits and the rules.
// The run, the plan, the exit codes and the report import these names
// rather than write the strings again, so a new metric or class is added
// in one place.

// Code is a verdict, the same number as the process exit code.
type Code int

// The verdict codes: the exit codes, which internal/exit owns.
const (
	Pass        Code = exit.Pass
	Regression  Code = exit.Regression
	CannotJudge Code = exit.CannotJudge
)

// String is the verdict in words, as summaries print it: exit.Word with
// the hyphen a space ("cannot judge"), so the words live in one place.
func (c Code) String() string {
	return strings.ReplaceAll(exit.Word(int(c)), "-", " ")
}

// Class groups metrics that share a default tolerance.
type Class string

// The metric classes.
const (
	Latency      Class = "latency"
	CPU          Class = "cpu"
	Throughput   Class = "throughput"
	Memory       Class = "memory"
	Transactions Class = "transactions"
)

// Classes lists the classes in the order reports show them.
var Classes = []Class{Throughput, Latency, CPU, Memory, Transactions}

// classNames is "throughput, latency, cpu, memory, transactions", for
// messages.
func classNames() string {
	names := make([]string, len(Classes))
	for i, c := range Classes {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// DefaultTolerance is the tolerance of each class, as a fraction, when the
// plan or the command line names none, under the paired rule. Latency and
// CPU are 5 %, Datadog SMP's effect tolerance: the paired floor adapts to
// the runner's noise, and at 8 pairs 5 % gave at most 1 % false alarms on
// every service bench/power measured (docs/judge.md, "Power"). The other
// classes keep FerroFED's gate's numbers, which were not measured anew.
var DefaultTolerance = map[Class]float64{
	Latency:      0.05,
	CPU:          0.05,
	Throughput:   0.20,
	Memory:       0.20,
	Transactions: 0.10,
}

// MediansTolerance is FerroFED's gate's tolerance of each class, the
// default under its rule (`[judge] rule = "medians"`): its floor, the arms' own
// spread, could not fall below the runner's drift, so its numbers are wide.
var MediansTolerance = map[Class]float64{
	Latency:      0.25,
	CPU:          0.25,
	Throughput:   0.20,
	Memory:       0.20,
	Transactions: 0.10,
}

// DefaultToleranceOf is the class's default tolerance under rule ("" is
// the paired rule).
func DefaultToleranceOf(rule string, c Class) float64 {
	if r, _ := CanonicalRule(rule); r == RuleMedians {
		return MediansTolerance[c]
	}
	return DefaultTolerance[c]
}

// The metric IDs that name no request group.
const (
	MetricThroughput    = "throughput"
	MetricCPUPerRequest = "cpu_per_request"
	MetricPeakMemory    = "peak_memory"
	MetricTxPerRequest  = "tx_per_request"
)

// Percentile is one latency percentile measured per request group: its
// name in metric IDs and its percent.
type Percentile struct {
	Name    string
	Percent float64
}

// Percentiles are the latency percentiles measured per request group; a
// latency metric's ID is the percentile's name, a dot and the group's name.
var Percentiles = []Percentile{{"p50", 50}, {"p95", 95}, {"p99", 99}}

// percentileNames is "p50/p95/p99", for messages.
func percentileNames() string {
	names := make([]string, len(Percentiles))
	for i, p := range Percentiles {
		names[i] = p.Name
	}
	return strings.Join(names, "/")
}

// WholeMetrics are the metrics that name no group, in report order
// (throughput first, then the per-group latencies, then these three).
var WholeMetrics = []Metric{
	{ID: MetricThroughput, Class: Throughput, Unit: "req/s", HigherIsBetter: true},
	{ID: MetricCPUPerRequest, Class: CPU, Unit: "ms"},
	{ID: MetricPeakMemory, Class: Memory, Unit: "bytes"},
	{ID: MetricTxPerRequest, Class: Transactions, Unit: "tx"},
}

// LatencyMetric is the metric of percentile q of group.
func LatencyMetric(q Percentile, group string) Metric {
	return Metric{ID: q.Name + "." + group, Class: Latency, Unit: "ms"}
}

// SplitLatencyID reads "p99.search" as (p99, "search"); ok is false for
// an ID that is no latency metric.
func SplitLatencyID(id string) (q Percentile, group string, ok bool) {
	name, group, ok := strings.Cut(id, ".")
	if !ok || group == "" {
		return Percentile{}, "", false
	}
	for _, p := range Percentiles {
		if name == p.Name {
			return p, group, true
		}
	}
	return Percentile{}, "", false
}

// ToleranceKeys are the keys a tolerance table may name besides a latency
// metric of one of its groups: the classes and the metrics without a group.
func ToleranceKeys() []string {
	var keys []string
	for _, c := range Classes {
		keys = append(keys, string(c))
	}
	for _, m := range WholeMetrics {
		if m.ID != string(Throughput) { // "throughput" is both a class and a metric
			keys = append(keys, m.ID)
		}
	}
	return keys
}

// CheckToleranceKey says what is wrong with a tolerance key, given the
// request groups of the run ("" when it is fine), so the plan and
// `perfgate compare` refuse the same keys in the same words.
func CheckToleranceKey(key string, groups []string) string {
	for _, k := range ToleranceKeys() {
		if key == k {
			return ""
		}
	}
	if q, g, ok := strings.Cut(key, "."); ok {
		for _, p := range Percentiles {
			if q != p.Name {
				continue
			}
			for _, name := range groups {
				if g == name {
					return ""
				}
			}
			return fmt.Sprintf("tolerance %q names no request group", key)
		}
	}
	return fmt.Sprintf("unknown tolerance %q; write %s, or %s.<group>", key, strings.Join(ToleranceKeys(), ", "), percentileNames())
}

// The idle limits: under 2 % of one core, under 1 committed transaction/s.
const (
	DefaultIdleCPU = 0.02
	DefaultIdleTx  = 1.0
)

// The rules the judge can apply to the metrics. RulePaired judges the
// per-pair ratios head/base and is the default; RuleMedians is FerroFED's
// gate's rule (medians per arm, each arm's own spread as the floor), kept
// for teams that need that reading exactly. docs/judge.md derives both.
const (
	RulePaired  = "paired"
	RuleMedians = "medians"
	// RuleMediansFormerName is what plans and reports called the medians
	// rule before it had its public name (after FerroFED's gate, which
	// perfgate grew from); it is still read, as RuleMedians.
	RuleMediansFormerName = "seed"
)

// Rules lists the rules a plan may name.
var Rules = []string{RulePaired, RuleMedians}

// CanonicalRule is the rule a written name means: the medians rule's
// former name reads as RuleMedians, and renamed says so, so a plan can
// warn; "" stays "" (the paired rule) and any other name is returned as
// it is, for the caller to refuse.
func CanonicalRule(name string) (rule string, renamed bool) {
	if name == RuleMediansFormerName {
		return RuleMedians, true
	}
	return name, false
}
