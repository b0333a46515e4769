// Package experiment runs perfgate's capacity experiments (`perfgate
// experiment`): a model from internal/load driven over its stages, the
// target's Prometheus gauges scraped beside it, and a report that says
// where the knee is, which resource ran out first, whether a population kept
// up, how a plateau grew and how long a spike took to recover from. The
// rules are written down in docs/experiment.md.
package experiment

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
)

// Kind and Version name the JSON report; a change that breaks a reader
// bumps Version.
const (
	Kind    = "perfgate.experiment"
	Version = 1
)

// Report is an experiment's JSON report. The measured parts (stages with
// their whole HDR histograms, the per-second series, the gauge samples)
// are kept beside what Analyze derives from them, so `perfgate merge` can
// add shards together and derive again.
type Report struct {
	Version  int       `json:"version"`
	Kind     string    `json:"kind"`
	Target   string    `json:"target"`
	Plan     string    `json:"plan,omitempty"`
	Started  time.Time `json:"started"`
	Model    string    `json:"model"`
	Shard    string    `json:"shard,omitempty"`  // "i/N" for one shard's report
	Shards   int       `json:"shards,omitempty"` // how many shard reports a merged report holds
	Canceled bool      `json:"canceled,omitempty"`
	Settings Settings  `json:"settings"`

	Stages  []Stage  `json:"stages"`
	Control *Ramp    `json:"control,omitempty"`
	Series  []Point  `json:"series"`
	Gauges  []Gauge  `json:"gauges,omitempty"`
	Clients *Clients `json:"clients,omitempty"`

	// Derived by Analyze.
	Knee       *Knee                   `json:"knee,omitempty"`
	RanOut     *RanOut                 `json:"ran_out,omitempty"`
	Little     []LittleRow             `json:"littles_law,omitempty"`
	Population *Population             `json:"population,omitempty"`
	Phases     []PhaseFigures          `json:"phases,omitempty"`
	Thresholds []judge.ThresholdResult `json:"thresholds,omitempty"`
	Routine    Routine                 `json:"routine"`
	Previous   *Comparison             `json:"previous,omitempty"`
	Notes      []string                `json:"notes,omitempty"`
	Warnings   []string                `json:"warnings,omitempty"`
	Exit       int                     `json:"exit"`
	Verdict    string                  `json:"verdict"`
}

// Settings is what Analyze needs to know about the experiment.
type Settings struct {
	Percentile    float64          `json:"percentile"`             // the latency percentile read (95 = p95)
	Success       float64          `json:"success"`                // the success gate, a fraction
	ObjectiveMS   float64          `json:"objective_ms,omitempty"` // the latency objective; 0 = none
	KneeTolerance float64          `json:"knee_tolerance"`
	RecoveryS     float64          `json:"recovery_s,omitempty"` // a spike must be recovered from this soon after it ends; 0 = within the recovery phase after it
	HitStatus     []int            `json:"hit_status,omitempty"`
	HitHeader     string           `json:"hit_header,omitempty"`
	HitField      string           `json:"hit_field,omitempty"`
	HitValue      any              `json:"hit_value,omitempty"`
	Group         string           `json:"group,omitempty"`
	Users         int              `json:"users,omitempty"`
	ThinkS        float64          `json:"think_s,omitempty"`
	JoinsS        float64          `json:"joins_s,omitempty"`
	RetryShare    float64          `json:"retry_share,omitempty"`   // the share of users who retry; 0 = none
	RetryAfterS   float64          `json:"retry_after_s,omitempty"` // they retry an answer slower than this
	Retriers      int              `json:"retriers,omitempty"`      // the users who drew to retry (shards add)
	WarmupS       float64          `json:"warmup_s"`
	Ramp          bool             `json:"ramp"`                 // the stages are a ramp: the knee is the question
	Thresholds    []plan.Threshold `json:"thresholds,omitempty"` // judged over every measured stage together
	Notes         []string         `json:"notes,omitempty"`      // the run's own notes (scrape failures), kept through Analyze
}

// Stage is one stage's measured window.
type Stage struct {
	Name      string             `json:"name"`
	Phase     string             `json:"phase,omitempty"`
	PhaseKind string             `json:"phase_kind,omitempty"`
	Level     float64            `json:"level"`
	Offered   float64            `json:"offered_per_s,omitempty"`
	StartS    float64            `json:"start_s"`
	LengthS   float64            `json:"length_s"`
	WarmupS   float64            `json:"warmup_s"`
	Sent      uint64             `json:"sent"`
	Completed uint64             `json:"completed"`
	Retries   uint64             `json:"retries,omitempty"` // of sent, the population users' retries
	Actions   uint64             `json:"actions,omitempty"` // a population's first requests due in the window that got an answer
	WaitS     float64            `json:"wait_s,omitempty"`  // the users' total wait over those, each to the answer taken (a retry's when they walked away)
	Total     load.GroupReport   `json:"total"`
	Groups    []load.GroupReport `json:"groups"`
	Derived   StageFigures       `json:"derived"`
}

// StageFigures is what Analyze reads off a stage.
type StageFigures struct {
	Throughput float64  `json:"throughput_per_s"` // expected answers finished in the window, per second
	SendRate   float64  `json:"sent_per_s"`
	RetryRate  float64  `json:"retries_per_s,omitempty"` // of the sent rate, the users' retries
	Success    float64  `json:"success"`
	LatencyMS  float64  `json:"latency_ms"` // the settings' percentile, client side
	ServerMS   float64  `json:"server_ms,omitempty"`
	DiffMS     float64  `json:"client_minus_server_ms,omitempty"`
	MeanMS     float64  `json:"mean_ms"`
	HitRatio   *float64 `json:"hit_ratio,omitempty"`
	Counts     bool     `json:"counts"` // toward capacity: at or above the success gate
	Objective  string   `json:"objective,omitempty"`
	Flags      []string `json:"flags,omitempty"`
}

// Ramp is the control ramp: the same stages with another group.
type Ramp struct {
	Group  string  `json:"group"`
	Stages []Stage `json:"stages"`
	Knee   *Knee   `json:"knee,omitempty"`
	Note   string  `json:"note,omitempty"`
}

// Point is one second of the run.
type Point struct {
	AtS         float64 `json:"at_s"`
	Stage       int     `json:"stage"`
	Done        uint64  `json:"done"`
	Failures    uint64  `json:"failures"`
	P50MS       float64 `json:"p50_ms"`
	P95MS       float64 `json:"p95_ms"`
	P99MS       float64 `json:"p99_ms"`
	ServerP95MS float64 `json:"server_p95_ms,omitempty"`
}

// Gauge is one scraped series.
type Gauge struct {
	Endpoint string        `json:"endpoint"`
	Name     string        `json:"name"`           // with its labels, as the endpoint writes them
	Kind     string        `json:"kind,omitempty"` // "" a gauge; "rate" a counter per second; "quantile" a histogram's or summary's
	Samples  []GaugeSample `json:"samples"`
	Rest     float64       `json:"rest"`
	Spread   float64       `json:"spread"`
	MovedAtS *float64      `json:"moved_at_s,omitempty"`
}

// GaugeSample is one scrape's value.
type GaugeSample struct {
	AtS   float64 `json:"at_s"`
	Value float64 `json:"value"`
}

// Clients is the clients model's own record.
type Clients struct {
	StartsS []float64 `json:"starts_s"`
	Abort   *Abort    `json:"abort,omitempty"`
}

// Abort is where an --on-error abort run stopped.
type Abort struct {
	AtS     float64 `json:"at_s"`
	Clients int     `json:"clients"`
	Rate    float64 `json:"rate_per_s,omitempty"`
	Group   string  `json:"group"`
	Status  int     `json:"status,omitempty"`
	Error   string  `json:"error,omitempty"`
	Text    string  `json:"text"`
}

// Knee is where throughput stopped rising while latency climbed.
type Knee struct {
	Stage       int     `json:"stage"`
	Name        string  `json:"name"`
	Level       float64 `json:"level"`
	Throughput  float64 `json:"throughput_per_s"`
	LatencyMS   float64 `json:"latency_ms"`
	Why         string  `json:"why"`
	Attribution string  `json:"attribution"` // "service" or "generator"
}

// RanOut is the first resource to run out: the gauge that first stopped
// following the load (it held at a level while the load still rose) or
// grew while throughput stayed flat, read stage by stage (ranout.go).
type RanOut struct {
	Gauge      string   `json:"gauge"`
	Endpoint   string   `json:"endpoint"`
	How        string   `json:"how"`    // "saturated" or "grew"
	From       string   `json:"from"`   // the stage before the change
	Before     float64  `json:"before"` // the gauge's mean over From
	After      float64  `json:"after"`  // its mean over Stage
	AtS        float64  `json:"at_s"`   // when it reached its ceiling, or first left its resting value
	Stage      string   `json:"stage"`  // the stage that showed it
	Level      float64  `json:"level"`
	Rest       float64  `json:"rest"`
	Value      float64  `json:"value"` // the sample at AtS
	LatencyAtS *float64 `json:"latency_crossed_at_s,omitempty"`
	LeadS      *float64 `json:"lead_s,omitempty"` // how long before the latency crossed
	Text       string   `json:"text"`
}

// LittleRow is Little's law on one stage: users = throughput x (latency +
// think time).
type LittleRow struct {
	Stage      string  `json:"stage"`
	Users      float64 `json:"users,omitempty"`
	Throughput float64 `json:"throughput_per_s"`
	LatencyS   float64 `json:"latency_s"`
	ThinkS     float64 `json:"think_s"`
	Implied    float64 `json:"implied_users"` // throughput x (latency + think)
}

// Population is the population model's verdict.
type Population struct {
	Users       int     `json:"users"`
	ThinkS      float64 `json:"think_s"`
	Offered     float64 `json:"offered_per_s"`  // users / think
	Expected    float64 `json:"expected_per_s"` // users / (think + latency)
	Achieved    float64 `json:"achieved_per_s"`
	ThinkTimes  float64 `json:"think_times"`
	JoinsInside bool    `json:"joins_in_window"`
	Bias        float64 `json:"bias"` // 1 + 1/(2k) with the joins inside the window
	Verdict     string  `json:"verdict"`

	// The users who retry, counted apart: present when retry_share is.
	RetryShare         float64 `json:"retry_share,omitempty"`
	RetryAfterS        float64 `json:"retry_after_s,omitempty"`
	Retriers           int     `json:"retriers,omitempty"`
	Retries            uint64  `json:"retries,omitempty"`
	RetryRate          float64 `json:"retries_per_s,omitempty"`
	OfferedWithRetries float64 `json:"offered_with_retries_per_s,omitempty"` // users / think + the retries' rate
	WaitMS             float64 `json:"wait_ms,omitempty"`                    // the users' mean wait an action, which Expected reads with retries
	Retry              string  `json:"retry_text,omitempty"`
}

// PhaseFigures is what a plateau or a spike showed.
type PhaseFigures struct {
	Phase         string             `json:"phase"`
	Kind          string             `json:"kind"`
	LatencyGrowth *float64           `json:"latency_growth_ms_per_min,omitempty"`
	GaugeGrowth   map[string]float64 `json:"gauge_growth_per_min,omitempty"`
	RecoveryS     *float64           `json:"recovery_s,omitempty"`
	RecoveryLimit *float64           `json:"recovery_limit_s,omitempty"` // how soon it had to be
	Failed        bool               `json:"failed,omitempty"`           // a spike not recovered from in time: exit 1
	Text          string             `json:"text"`
}

// Routine is the four numbers kept run to run.
type Routine struct {
	Knee            *float64 `json:"knee_per_s,omitempty"`
	KneeLevel       *float64 `json:"knee_level,omitempty"`
	FirstResource   string   `json:"first_resource,omitempty"`
	FirstResourceAt *float64 `json:"first_resource_level,omitempty"`
	PlateauGrowth   *float64 `json:"plateau_growth_ms_per_min,omitempty"`
	RecoveryS       *float64 `json:"recovery_s,omitempty"`
}

// Comparison is this run's routine numbers against an earlier report's.
type Comparison struct {
	File   string   `json:"file"`
	Before Routine  `json:"before"`
	Lines  []string `json:"lines"`
	Failed bool     `json:"failed"`
}

// WriteFile writes the report as indented JSON.
func (r *Report) WriteFile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("writing the experiment report: %w", err)
	}
	if err := r.Write(f); err != nil {
		f.Close()
		return fmt.Errorf("writing the experiment report %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing the experiment report %s: %w", path, err)
	}
	return nil
}

// Write writes the report as indented JSON with a final newline.
func (r *Report) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadFile reads a report, refusing other kinds and versions.
func ReadFile(path string) (*Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the experiment report: %w", err)
	}
	defer f.Close()
	var r Report
	if err := json.NewDecoder(f).Decode(&r); err != nil {
		return nil, fmt.Errorf("reading the experiment report %s: %w", path, err)
	}
	if r.Kind != Kind || r.Version != Version {
		return nil, fmt.Errorf("reading the experiment report %s: kind %q version %d, this perfgate reads %q version %d", path, r.Kind, r.Version, Kind, Version)
	}
	return &r, nil
}
