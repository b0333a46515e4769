// Package report holds a gate's versioned JSON report, which carries all
// the judge needs so `perfgate compare` can judge it again offline, and
// renders it: the Markdown job summary and the terminal summary. The
// numbers come from the judge; this package only words and lays them out.
package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
)

// Version is the report format this perfgate writes and the newest it
// reads. Bump it when a field changes meaning or goes away. Version 2
// keeps each phase's latency histograms (judge.GroupFigures), from which
// the tails are judged pooled over the pairs; a version 1 report has none,
// and `perfgate compare` judges its tails phase by phase, as they were.
const Version = 2

// Build names one build: its name, which is its role ("base", "head",
// "variant"), commit, ref and why it was chosen. A variant arm is the
// head's build started with Overrides added (the variant control).
type Build struct {
	Name      string   `json:"name"`
	Commit    string   `json:"commit,omitempty"`
	Ref       string   `json:"ref,omitempty"`
	Why       string   `json:"why,omitempty"`
	Overrides []string `json:"overrides,omitempty"`
}

// Duration is a time.Duration that reads and writes as "10s" in JSON.
type Duration time.Duration

func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: write it like 10s or 1m30s", b)
	}
	*d = Duration(v)
	return nil
}

// String reads "60s" rather than Go's "1m0s" for whole seconds.
func (d Duration) String() string {
	if v := time.Duration(d); v%time.Second == 0 {
		return fmt.Sprintf("%ds", v/time.Second)
	}
	return time.Duration(d).String()
}

// Settings are the run's shape, as the plan gave it. Rate is arrivals/s
// to each arm. Plan is the plan's path as the command line gave it;
// PlanPath is the same file relative to its repository's root
// (perf/plan.toml), which GitHub annotations need, empty when the plan lies
// in no repository. Reports from before PlanPath carry none.
type Settings struct {
	Plan     string   `json:"plan,omitempty"`
	PlanPath string   `json:"plan_path,omitempty"`
	Pairs    int      `json:"pairs"`
	Rate     float64  `json:"rate"`
	Warmup   Duration `json:"warmup"`
	Measure  Duration `json:"measure"`
	Idle     Duration `json:"idle"`
}

// Report is one attempt's gate: who ran against whom, how, everything the
// judge read, and what it decided.
type Report struct {
	Version int       `json:"version"`
	Tool    string    `json:"tool"`
	Created time.Time `json:"created"`
	Base    Build     `json:"base"`
	Head    Build     `json:"head"`
	// Variant is the third arm the variant control started, nil when none
	// ran; reports from before it carry none.
	Variant  *Build   `json:"variant,omitempty"`
	BaseNote string   `json:"base_note,omitempty"`
	Settings Settings `json:"settings"`
	// Judging is which plan judged: the settings the head changed
	// (changed.go); nil when the run judged with one plan.
	Judging *Judging `json:"judging,omitempty"`
	// Attempt is the attempt job's own number (1, 2, 3) and RunAttempt
	// GITHUB_RUN_ATTEMPT (re-runs of the workflow); CPUModel is the
	// runner's, by which a regression may be retried (internal/attempts).
	Attempt    int    `json:"attempt,omitempty"`
	RunAttempt int    `json:"run_attempt,omitempty"`
	CPUModel   string `json:"cpu_model,omitempty"`
	// Rejudged is set by `perfgate compare`: the verdict below is not the
	// run's own but a judgement of its figures under other tolerances.
	Rejudged bool `json:"rejudged,omitempty"`
	// PlanLines maps a metric ID to the plan line its judgement came from
	// (plan.MetricLine), so the verdict service annotates that line; a
	// metric the plan writes nothing about has none. It is keyed by ID,
	// not kept in the verdict, so a rejudged report keeps it. Reports from
	// before it carry none.
	PlanLines map[string]int `json:"plan_lines,omitempty"`
	Input     judge.Input    `json:"input"`
	// Controls is what the after-run checks found; `perfgate compare`
	// applies it again to its new judgement. nil when the run had none.
	Controls *judge.Controls `json:"controls,omitempty"`
	Verdict  judge.Verdict   `json:"verdict"`
}

// Write stores r at path as indented JSON, at the current Version,
// replacing any file there only once the new one is complete.
func Write(path string, r *Report) error {
	c := *r
	c.Version = Version
	b, err := json.MarshalIndent(&c, "", "  ")
	if err != nil {
		return fmt.Errorf("writing report %s: %w", path, err)
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing report %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("writing report %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing report %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing report %s: %w", path, err)
	}
	return nil
}

// Read loads the report at path. A file that is not a report, or one from
// a newer perfgate, is refused (exit 2) with what to do about it.
func Read(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, exit.Refuse(fmt.Errorf("reading report: %w", err))
	}
	var head struct {
		Version *int   `json:"version"`
		Tool    string `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, exit.Refuse(fmt.Errorf("reading report %s: %s: give the JSON report a gate wrote (target/perf/latest.json)", path, jsonError(b, err)))
	}
	switch {
	case head.Version == nil:
		return nil, exit.Refusef("reading report %s: no \"version\" field, so this is not a perfgate report: give the JSON report a gate wrote", path)
	case *head.Version < 1:
		return nil, exit.Refusef("reading report %s: version %d is no report version: give the JSON report a gate wrote", path, *head.Version)
	case *head.Version > Version:
		return nil, exit.Refusef("reading report %s: it is a version %d report (written by %s) and this perfgate reads up to version %d: judge it with that perfgate or a newer one", path, *head.Version, head.Tool, Version)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return nil, exit.Refuse(fmt.Errorf("reading report %s: %s: the file was changed or cut short; use the report as the gate wrote it", path, jsonError(b, err)))
	}
	if r.Input.Rule == "" {
		// Reports from before the paired rule name no rule: the medians
		// rule judged them, and judging them again by it keeps their
		// reading.
		r.Input.Rule = judge.RuleMedians
	}
	return &r, nil
}

// jsonError says where in b a decoding error happened, by line.
func jsonError(b []byte, err error) string {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 {
		return err.Error()
	}
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	line := 1 + bytes.Count(b[:off], []byte("\n"))
	return fmt.Sprintf("line %d: %v", line, err)
}
