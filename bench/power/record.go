package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/perfgate/perfgate/internal/judge"

	"time"
)

// record is one gate, as a line of the results file.
type record struct {
	Profile     profile    `json:"profile"`
	Scenario    string     `json:"scenario"`
	Target      string     `json:"target,omitempty"` // "" or "example": the example service
	Factor      float64    `json:"latency_factor"`
	Latency     string     `json:"latency"`
	Inject      string     `json:"inject"`
	HeadLatency string     `json:"head_latency,omitempty"`
	Run         int        `json:"run"`
	Started     time.Time  `json:"started"`
	WallS       float64    `json:"wall_s"`
	Waited      float64    `json:"waited_for_load_s"`
	LoadBefore  float64    `json:"load1_before"`
	LoadAfter   float64    `json:"load1_after"`
	LoadHigh    bool       `json:"load_high,omitempty"`
	Code        judge.Code `json:"code"`
	Verdict     string     `json:"verdict"`
	Failures    []string   `json:"failures,omitempty"`
	CannotJudge []string   `json:"cannot_judge,omitempty"`
	P50Ratio    float64    `json:"p50_ratio"`  // head/base p50, median over the groups
	P50Margin   float64    `json:"p50_margin"` // the largest p50 worse - threshold over the groups; > 0 breaches
	// Closest is the metric nearest to breaching (largest worse - threshold), over all metrics.
	Closest       string       `json:"closest_metric"`
	ClosestMargin float64      `json:"closest_margin"`
	Error         string       `json:"error,omitempty"`
	Input         *judge.Input `json:"input,omitempty"`
	// EstWall marks a wall time scaled for a re-judged subset of pairs.
	EstWall bool   `json:"-"`
	Label   string `json:"-"`
}

func (r *record) setVerdict(v judge.Verdict) {
	r.Code, r.Verdict, r.Failures, r.CannotJudge = v.Code, v.Word(), v.Failures, v.CannotJudge
	var ratios []float64
	r.P50Margin, r.ClosestMargin, r.Closest = math.Inf(-1), math.Inf(-1), ""
	for _, m := range v.Metrics {
		if d := m.Worse - m.Threshold; d > r.ClosestMargin {
			r.Closest, r.ClosestMargin = m.ID, d
		}
		if strings.HasPrefix(m.ID, "p50.") {
			ratios = append(ratios, m.Ratio)
			r.P50Margin = math.Max(r.P50Margin, m.Worse-m.Threshold)
		}
	}
	r.P50Ratio = medianF(ratios)
	if len(ratios) == 0 {
		r.P50Margin = math.NaN()
	}
	if r.Closest == "" {
		r.ClosestMargin = math.NaN()
	}
}

func (r record) line(runs int) string {
	s := fmt.Sprintf("  %-7s run %2d/%d  %-12s  wall %5.1f s  p50 head/base %.3f (margin %+.3f)  load1 %.2f before, %.2f after",
		r.Scenario, r.Run, runs, r.Verdict, r.WallS, r.P50Ratio, r.P50Margin, r.LoadBefore, r.LoadAfter)
	if r.Waited >= 1 {
		s += fmt.Sprintf(" (waited %.0f s)", r.Waited)
	}
	if r.LoadHigh {
		s += "  LOAD HIGH"
	}
	for _, f := range r.Failures {
		s += "\n      fail: " + f
	}
	for _, c := range r.CannotJudge {
		s += "\n      cannot judge: " + c
	}
	if r.Error != "" {
		s += "\n      error: " + r.Error
	}
	return s
}

func appendRecord(path string, r record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encoding a result: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("opening the results file: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

func readRecords(path string) ([]record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the results: %w", err)
	}
	defer f.Close()
	var out []record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var r record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		r.Profile.Name = currentProfileName(r.Profile.Name)
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return out, nil
}

// rejudge judges a recorded gate again with other tolerances and only its
// first k pairs (0: all), as a gate of that profile would have been judged.
// The wall time is scaled by the share of pairs kept, an estimate.
func rejudge(r record, tol map[string]float64, k int) record {
	out := r
	if r.Input == nil {
		return out
	}
	in := *r.Input
	if k > 0 && k < len(in.Base) {
		in.Base, in.Head = in.Base[:k], in.Head[:k]
		out.WallS = r.WallS * float64(k) / float64(len(r.Input.Base))
		out.EstWall = true
		out.Profile.Pairs = k
	}
	if tol != nil {
		in.Tolerance = tol
		out.Profile.Tol = tol
	}
	out.Input = &in
	out.setVerdict(judge.Judge(in))
	return out
}
