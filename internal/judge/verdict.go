package judge

// Interval is a paired confidence interval of the head/base ratio over the
// pairs: the Hodges-Lehmann estimate with the interval the Wilcoxon
// signed-rank test gives. Confidence is what the interval really reaches,
// which with few pairs is below the 95 % asked for (87.5 % with 4 pairs).
// N counts the pairs it used (pairs with a zero value in an arm are left out).
type Interval struct {
	Estimate   float64 `json:"estimate"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
	Confidence float64 `json:"confidence"`
	N          int     `json:"n"`
}

// MetricResult is the judgement of one metric. Base and Head are the
// medians over the phases; Worse is how much worse the head is, as a
// fraction (negative when better): under the seed's rule from the medians,
// under the paired rule the geometric mean of the pairs' ratios. Floor is
// the noise floor (seed: the worse of the arms' spreads; paired: the
// one-sided bound the pairs' scatter puts on that mean, PairSpread being
// the standard deviation of the pairs' log ratios); Threshold the larger of
// Tolerance and Floor. ZeroBase marks a base median of 0, where no ratio
// exists and Ratio and Worse hold 0 (see docs/judge.md). PairRatios holds
// head/base per pair, 0 where the base phase was 0. Samples is, for a
// latency metric, the fewest answers one phase's figure rested on, and
// Beyond how many of them lay beyond a tail percentile (p99 of 600 answers
// rests on the 6 slowest).
type MetricResult struct {
	Metric
	Rule       string  `json:"rule,omitempty"`
	PairSpread float64 `json:"pair_spread,omitempty"`
	// Detectable is, under the paired rule, the smallest change (as Worse
	// reads it) that gates with these pairs' scatter catch in at least
	// DetectPower of runs; 0 under the seed's rule, from a base of 0, or
	// with fewer than 2 pairs. It is an estimate from this gate's own
	// pairs, not a promise.
	Detectable float64 `json:"detectable,omitempty"`
	Samples    uint64  `json:"samples,omitempty"`
	Beyond     uint64  `json:"beyond,omitempty"`
	// Slowest marks a latency figure that no answer of its phase lay
	// beyond (Beyond 0): the phase's slowest answer, reported but never
	// failed on.
	Slowest bool `json:"slowest,omitempty"`
	// Tail is set when the metric, a tail percentile, was judged from
	// each arm's histogram pooled over the pairs (tail.go): then Base and
	// Head are the pooled percentiles, Worse their ratio less 1, Floor the
	// permutation bound, CI and Detectable the pooled rule's, and Samples
	// and Beyond count the smaller arm's pooled answers. PairRatios,
	// PairsBreached and the spreads stay the phases' own, for reading.
	Tail            *Tail     `json:"tail,omitempty"`
	Base            float64   `json:"base"`
	Head            float64   `json:"head"`
	Ratio           float64   `json:"ratio"`
	Worse           float64   `json:"worse"`
	ZeroBase        bool      `json:"zero_base,omitempty"`
	BaseSpread      float64   `json:"base_spread"`
	HeadSpread      float64   `json:"head_spread"`
	Tolerance       float64   `json:"tolerance"`
	ToleranceSource string    `json:"tolerance_source"`
	Floor           float64   `json:"floor"`
	Threshold       float64   `json:"threshold"`
	Pairs           int       `json:"pairs"`
	PairsBreached   int       `json:"pairs_breached"`
	PairRatios      []float64 `json:"pair_ratios"`
	Breach          bool      `json:"breach"`
	Fail            bool      `json:"fail"`
	CI              Interval  `json:"interval"`
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
