package judge

// Interval is a paired confidence interval of the head/base ratio over the
// pairs: the Hodges-Lehmann estimate with the interval the Wilcoxon
// signed-rank test gives. Confidence is what the interval really reaches,
// which with few pairs is below the 95 % asked for (87.5 % with 4 pairs;
// 96.1 % with the default 8).
// N counts the pairs it used (pairs with a zero value in an arm are left out).
type Interval struct {
	Estimate   float64 `json:"estimate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	N          int     `json:"n"`
}

// MetricResult is the judgement of one metric: what each arm measured,
// how much worse the head is, the bar it was held to and whether it
// failed. docs/judge.md derives both rules; the fields say which rule
// fills them how. Fractions are as the plan's percent divided by 100.
type MetricResult struct {
	// Metric is the metric judged: its ID, class, unit and direction.
	Metric
	// Rule is the rule that judged it: RulePaired or RuleMedians (a base of
	// 0 is always read as the medians rule reads it).
	Rule string `json:"rule,omitempty"`
	// PairSpread is, under the paired rule, the standard deviation of the
	// pairs' log ratios ln(head/base): how much the pairs disagree.
	PairSpread float64 `json:"pair_spread,omitempty"`
	// Detectable is, under the paired rule, the smallest change (as Worse
	// reads it) that gates with these pairs' scatter catch in at least
	// DetectPower of runs; 0 under the medians rule, from a base of 0, or
	// with fewer than 2 pairs. It is an estimate from this gate's own
	// pairs, not a promise.
	Detectable float64 `json:"detectable,omitempty"`
	// Samples is, for a latency metric, the fewest answers one phase's
	// figure rested on; 0 for other metrics.
	Samples uint64 `json:"samples,omitempty"`
	// Beyond is how many of those answers lay beyond the percentile (p99
	// of 600 answers rests on the 6 slowest).
	Beyond uint64 `json:"beyond,omitempty"`
	// Slowest marks a latency figure that no answer of its phase lay
	// beyond (Beyond 0): the phase's slowest answer, reported but never
	// failed on.
	Slowest bool `json:"slowest,omitempty"`
	// Tail is set when the metric, a tail percentile (p95, p99), was
	// judged from each arm's histograms pooled over the pairs (tail.go):
	// then Base and Head are the pooled percentiles, Worse their ratio
	// less 1, Floor the bound from swapping arm labels within pairs, CI
	// and Detectable the pooled rule's, Samples and Beyond the smaller
	// arm's pooled answers, and Fail needs no most pairs. PairRatios,
	// PairsBreached and the spreads stay the phases' own, for reading.
	Tail *Tail `json:"tail,omitempty"`
	// Base is the median of the base's phases.
	Base float64 `json:"base"`
	// Head is the median of the head's phases.
	Head float64 `json:"head"`
	// Ratio is Head/Base; 0 when Base is 0.
	Ratio float64 `json:"ratio"`
	// Worse is how much worse the head is, as a fraction (negative when
	// better): under the medians rule from the medians, under the paired
	// rule from the geometric mean of the pairs' ratios; 0 when Base is 0.
	Worse float64 `json:"worse"`
	// ZeroBase marks a base median of 0, where no ratio exists (see
	// docs/judge.md, "A base value of 0").
	ZeroBase bool `json:"zero_base,omitempty"`
	// BaseSpread is how far the base's furthest phase lies from its
	// median, relative to the median.
	BaseSpread float64 `json:"base_spread"`
	// HeadSpread is the same for the head.
	HeadSpread float64 `json:"head_spread"`
	// Tolerance is how much worse the head may be before the metric
	// breaches, as a fraction.
	Tolerance float64 `json:"tolerance"`
	// ToleranceSource says where Tolerance came from: "metric" (the
	// metric's own entry), "class" (its class's) or "default".
	ToleranceSource string `json:"tolerance_source"`
	// Floor is the noise floor: under the medians rule the worse of the
	// arms' spreads; under the paired rule the one-sided bound the pairs'
	// scatter puts on the mean of their ratios.
	Floor float64 `json:"floor"`
	// Threshold is the larger of Tolerance and Floor: the bar Worse is
	// held to.
	Threshold float64 `json:"threshold"`
	// Pairs is how many pairs were judged.
	Pairs int `json:"pairs"`
	// PairsBreached counts the pairs whose own head was worse than the
	// bar (the paired rule: Tolerance; the medians rule: Threshold).
	PairsBreached int `json:"pairs_breached"`
	// PairRatios holds head/base per pair, 0 where the base phase was 0.
	PairRatios []float64 `json:"pair_ratios"`
	// Breach is Worse strictly over Threshold.
	Breach bool `json:"breach"`
	// Fail is a Breach in most pairs (more than half), unless Slowest.
	Fail bool `json:"fail"`
	// CI is the paired confidence interval of head/base, for the reader;
	// the verdict is the rule's.
	CI Interval `json:"interval"`
}

// IdleResult is the idle phase against its limits (defaults filled in).
type IdleResult struct {
	Idle
	CPUFail bool `json:"cpu_fail"`
	TxFail  bool `json:"tx_fail"`
}

// Verdict is the judge's answer. Code is Pass, Regression or CannotJudge;
// cannot judge wins over regression, since a run that cannot be judged
// says nothing about the code. Every reason is kept whatever the code, so a
// reader of a cannot-judge verdict still sees what would have failed.
type Verdict struct {
	Code        Code           `json:"code"`
	Rule        string         `json:"rule,omitempty"`
	Metrics     []MetricResult `json:"metrics"`
	Idle        *IdleResult    `json:"idle,omitempty"`
	CannotJudge []string       `json:"cannot_judge,omitempty"`
	Failures    []string       `json:"failures,omitempty"`
	Notes       []string       `json:"notes,omitempty"`
	// LeftOut names each request group whose latency was not compared,
	// with why (the base never answered it as the plan says, say).
	LeftOut    []string          `json:"left_out,omitempty"`
	Thresholds []ThresholdResult `json:"thresholds,omitempty"`
}

// Word is the verdict in one word, as summaries print it.
func (v Verdict) Word() string { return v.Code.String() }
