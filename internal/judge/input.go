package judge

// Metric names one figure measured per arm per phase. ID is "throughput",
// "p50.<group>", "p95.<group>", "p99.<group>", "peak_memory",
// "cpu_per_request" or "tx_per_request"; Unit is how its values read
// ("req/s", "ms", "bytes", "ms", "tx").
type Metric struct {
	ID             string `json:"id"`
	Class          Class  `json:"class"`
	Unit           string `json:"unit"`
	HigherIsBetter bool   `json:"higher_is_better,omitempty"`
}

// Half holds a group's latency over one half of a phase's measured window,
// enough for the halves test: the median, the 90th percentile (which gives
// the spread the test needs to know how noisy the median is) and the count.
type Half struct {
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	Count uint64  `json:"count"`
}

// GroupFigures are one request group's figures in one arm's phase.
// WrongStatus counts answers with an HTTP status the plan does not name,
// by status; Failed counts requests that got no answer at all, by the kind
// of failure the load engine named ("timeout", "refused", "reset"). The two
// are kept apart because only a wrong status is the arm's own answer.
// Unexpected is how reports before that split held both (numeric keys are
// statuses): the judge still reads it, and never writes it.
type GroupFigures struct {
	Name        string            `json:"name"`
	Requests    uint64            `json:"requests"`
	P50         float64           `json:"p50_ms"`
	P99         float64           `json:"p99_ms"`
	WrongStatus map[int]uint64    `json:"wrong_status,omitempty"`
	Failed      map[string]uint64 `json:"failed,omitempty"`
	Unexpected  map[string]uint64 `json:"unexpected,omitempty"`
	Halves      [2]Half           `json:"halves"`
	// Latency is the phase's whole latency histogram of the group (the
	// answers as planned), from which the tails are judged pooled over
	// the pairs (tail.go); Server is the server's own figure, where the
	// plan sets server_timing. Reports from before version 2 carry
	// neither, and their tails are judged phase by phase.
	Latency *Histogram `json:"latency_histogram,omitempty"`
	Server  *Histogram `json:"server_histogram,omitempty"`
}

// Schedule says how well one arm's arrivals kept to the plan in a phase's
// measured window. Late counts arrivals sent behind their due time by more
// than the run's lateness bound; Dropped, arrivals due but never sent;
// Answered, arrivals whose answer (any status, or an error) came back before
// the phase ended.
type Schedule struct {
	Offered     float64 `json:"offered_per_s"`
	Achieved    float64 `json:"achieved_per_s"`
	Intended    uint64  `json:"intended"`
	Sent        uint64  `json:"sent"`
	Late        uint64  `json:"late"`
	Dropped     uint64  `json:"dropped"`
	Answered    uint64  `json:"answered"`
	LatenessP99 float64 `json:"lateness_p99_ms"`
}

// Phase is one arm's measured window in one pair. Values holds every
// metric's value by ID; Lead says which arm's arrivals came first.
type Phase struct {
	Pair   int                `json:"pair"`
	Lead   string             `json:"lead"`
	Values map[string]float64 `json:"values"`
	// Resolution is, by metric ID, the step a value moves in within this
	// phase: CPU time is counted in clock ticks, so CPU per request moves
	// in one tick over the phase's requests. The paired rule does not
	// count a pair as breached by a difference its rounding could make.
	// Absent: the value is exact enough.
	Resolution map[string]float64 `json:"resolution,omitempty"`
	Groups     []GroupFigures     `json:"groups"`
	Schedule   Schedule           `json:"schedule"`
}

// Idle holds the head's idle phase: its CPU as a fraction of one core and
// its store's committed transactions per second over Seconds. A zero limit
// means the default (DefaultIdleCPU, DefaultIdleTx); StoreMeasured is false
// when the arm has no store to read.
type Idle struct {
	Seconds       float64 `json:"seconds"`
	CPU           float64 `json:"cpu_cores"`
	CPULimit      float64 `json:"cpu_limit,omitempty"`
	TxPerSec      float64 `json:"tx_per_s"`
	TxLimit       float64 `json:"tx_limit,omitempty"`
	StoreMeasured bool    `json:"store_measured"`
}

// Input is everything the judge reads. Base and Head hold one phase per
// pair, in the same order. Tolerance maps a class or a metric ID to a
// fraction; a metric ID beats its class, and both beat DefaultTolerance.
// Rule is RulePaired or RuleMedians ("" is RulePaired). Idle is nil when no
// idle phase ran. Thresholds are the plan's absolute limits as the run
// measured them on the head; Notes are the run's own remarks (a data
// source that ran out and primed a cache), which every summary repeats.
type Input struct {
	Metrics    []Metric           `json:"metrics"`
	Base       []Phase            `json:"base"`
	Head       []Phase            `json:"head"`
	Rule       string             `json:"rule,omitempty"`
	Tolerance  map[string]float64 `json:"tolerance,omitempty"`
	Idle       *Idle              `json:"idle,omitempty"`
	Thresholds []Threshold        `json:"thresholds,omitempty"`
	Notes      []string           `json:"notes,omitempty"`
}
