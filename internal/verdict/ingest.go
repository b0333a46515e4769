package verdict

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/perfgate/perfgate/internal/report"
)

// parseAttempt reads the submission's report for the facts the service
// indexes (verdict, metrics, why the base) and keeps its raw JSON.
func parseAttempt(sub Submission, now time.Time) (*Attempt, error) {
	f := sub.Facts
	a := &Attempt{Facts: f, Received: now.UTC()}
	if f.ExitCode != nil {
		a.Verdict = WordOf(*f.ExitCode)
	}
	raw := bytes.TrimSpace(sub.Report)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		// Only a verdict (0 or 1) needs its report; a gate that could not
		// judge (2) or was killed or crashed (any other code) may leave none.
		if f.ExitCode != nil && (*f.ExitCode == 0 || *f.ExitCode == 1) {
			return nil, inputf("report", "an attempt that exited %d carries its JSON report (target/perf/latest.json); send it, or exit_code null when the attempt ended without one", *f.ExitCode)
		}
		return a, nil
	}
	var r report.Report
	if err := json.Unmarshal(raw, &r); err != nil {
		// A newer report may have changed a field's type: say so by its
		// version rather than by the field.
		var head struct{ Version int }
		if json.Unmarshal(raw, &head) == nil && head.Version > report.Version {
			r.Version = head.Version
		} else {
			return nil, inputf("report", "%v; send the JSON report as the gate wrote it", err)
		}
	}
	switch {
	case r.Version == 0:
		return nil, inputf("report.version", "missing, so this is not a perfgate report: send the JSON report the gate wrote")
	case r.Version < 1 || r.Version > report.Version:
		return nil, inputf("report.version", "version %d; this service reads report versions 1 to %d: upgrade perfgate-verdictd", r.Version, report.Version)
	}
	if f.ExitCode != nil && *f.ExitCode <= 2 && int(r.Verdict.Code) != *f.ExitCode {
		return nil, inputf("facts.exit_code", "%d, but the report's verdict code is %d: send the exit code of the gate that wrote this report", *f.ExitCode, r.Verdict.Code)
	}
	if a.Facts.CPUModel == "" {
		a.Facts.CPUModel = r.CPUModel
	}
	a.BaseNote = r.BaseNote
	for _, m := range r.Verdict.Metrics {
		a.Metrics = append(a.Metrics, MetricPoint{ID: m.ID, Base: m.Base, Head: m.Head, Ratio: m.Ratio, Fail: m.Fail})
	}
	// Stored as the gate wrote it: the raw JSON, byte for byte.
	a.Report = append(json.RawMessage(nil), raw...)
	a.parsed = &r
	return a, nil
}

// decodeReport reads a stored attempt's report back.
func decodeReport(a *Attempt) (*report.Report, error) {
	if a.parsed != nil {
		return a.parsed, nil
	}
	if len(a.Report) == 0 {
		return nil, nil
	}
	var r report.Report
	if err := json.Unmarshal(a.Report, &r); err != nil {
		return nil, fmt.Errorf("reading the stored report of attempt %d of run %d: %w", a.Facts.Attempt, a.Facts.RunID, err)
	}
	return &r, nil
}
