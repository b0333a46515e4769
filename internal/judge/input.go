// Package judge decides a gate: pass, regression or cannot judge, from plain
// numbers per arm per phase. It does no I/O and keeps no state, so the JSON
// report can hold its whole input and `perfgate compare` can judge it again
// offline with other tolerances.
package judge

// Class groups metrics that share a default tolerance.
type Class string

// The metric classes and their default tolerances (the seed's numbers).
const (
	Latency      Class = "latency"
	CPU          Class = "cpu"
	Throughput   Class = "throughput"
	Memory       Class = "memory"
	Transactions Class = "transactions"
)

// DefaultTolerance is the tolerance of each class, as a fraction, when the
// plan or the command line names none.
var DefaultTolerance = map[Class]float64{
	Latency:      0.25,
	CPU:          0.25,
	Throughput:   0.20,
	Memory:       0.20,
	Transactions: 0.10,
}

// Classes lists the classes in the order reports show them.
var Classes = []Class{Throughput, Latency, CPU, Memory, Transactions}

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
// Unexpected counts answers the plan does not name, keyed by status ("500")
// or by the failure that stood for one ("error", "timeout").
type GroupFigures struct {
	Name       string            `json:"name"`
	Requests   uint64            `json:"requests"`
	P50        float64           `json:"p50_ms"`
	P99        float64           `json:"p99_ms"`
	Unexpected map[string]uint64 `json:"unexpected,omitempty"`
	Halves     [2]Half           `json:"halves"`
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
	Pair     int                `json:"pair"`
	Lead     string             `json:"lead"`
	Values   map[string]float64 `json:"values"`
	Groups   []GroupFigures     `json:"groups"`
	Schedule Schedule           `json:"schedule"`
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

// The idle limits: under 2 % of one core, under 1 committed transaction/s.
const (
	DefaultIdleCPU = 0.02
	DefaultIdleTx  = 1.0
)

// Input is everything the judge reads. Base and Head hold one phase per
// pair, in the same order. Tolerance maps a class or a metric ID to a
// fraction; a metric ID beats its class, and both beat DefaultTolerance.
// Idle is nil when no idle phase ran.
type Input struct {
	Metrics   []Metric           `json:"metrics"`
	Base      []Phase            `json:"base"`
	Head      []Phase            `json:"head"`
	Tolerance map[string]float64 `json:"tolerance,omitempty"`
	Idle      *Idle              `json:"idle,omitempty"`
}
