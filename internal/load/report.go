package load

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// ReportVersion is the version of the JSON report this package writes and
// reads. A change that breaks a reader bumps it.
const ReportVersion = 1

// Report is the JSON form of a Result, versioned so a later perfgate can
// re-judge it offline. Histograms travel whole (HDR V2 compressed, base64)
// beside the nearest-rank percentiles read from them.
type Report struct {
	Version   int              `json:"version"`
	Kind      string           `json:"kind"`
	Target    string           `json:"target"`
	Plan      string           `json:"plan,omitempty"`
	Started   time.Time        `json:"started"`
	WarmupS   float64          `json:"warmup_s"`
	MeasuredS float64          `json:"measured_s"`
	Canceled  bool             `json:"canceled,omitempty"`
	Schedule  ScheduleReport   `json:"schedule"`
	Total     GroupReport      `json:"total"`
	Groups    []GroupReport    `json:"groups"`
	Halves    [2][]GroupReport `json:"halves"`
	// Notes are the run's remarks: a data source that ran out and repeated
	// values (a primed cache), each [[threshold]] with its outcome.
	Notes []string `json:"notes,omitempty"`
}

// ReportKind names the report's kind, for readers handed an unknown file.
const ReportKind = "perfgate.load"

// ReportMeta is what a Result does not know about its own run.
type ReportMeta struct {
	Target string
	Plan   string
	Warmup time.Duration
}

// ScheduleReport is Schedule in JSON.
type ScheduleReport struct {
	Offered     float64     `json:"offered_per_s"`
	Achieved    float64     `json:"achieved_per_s"`
	Intended    uint64      `json:"intended"`
	Sent        uint64      `json:"sent"`
	Late        uint64      `json:"late"`
	LateAfterMS float64     `json:"late_after_ms"`
	Dropped     uint64      `json:"dropped"`
	Canceled    uint64      `json:"canceled"`
	Lateness    *HistReport `json:"lateness,omitempty"`
	// OutOfSockets is Schedule.OutOfSockets; absent when none.
	OutOfSockets uint64 `json:"out_of_sockets,omitempty"`
}

// GroupReport is GroupStats in JSON.
type GroupReport struct {
	Name         string            `json:"name"`
	Requests     uint64            `json:"requests"`
	Expected     uint64            `json:"expected"`
	Unexpected   uint64            `json:"unexpected"`
	SuccessRatio float64           `json:"success_ratio"`
	Statuses     map[int]uint64    `json:"statuses,omitempty"`
	Hits         uint64            `json:"hits,omitempty"`          // expected answers that are hits by the attack's hit rule
	HitBeyond    uint64            `json:"hit_beyond,omitempty"`    // misses whose JSON field lay past the body bound
	WrongAnswers uint64            `json:"wrong_answers,omitempty"` // expected statuses whose answer fails the group's expect_body, expect_json or expect_header
	WrongAnswer  *AnswerSample     `json:"wrong_answer,omitempty"`  // the first of them
	Errors       map[string]uint64 `json:"errors,omitempty"`
	BytesIn      uint64            `json:"bytes_in"`
	BytesOut     uint64            `json:"bytes_out"`
	Latency      *HistReport       `json:"latency,omitempty"`
	Service      *HistReport       `json:"service,omitempty"`
	Server       *HistReport       `json:"server,omitempty"`
}

// HistReport is a histogram: nearest-rank percentiles in µs and the
// histogram itself.
type HistReport struct {
	Count int64  `json:"count"`
	Min   int64  `json:"min_us"`
	P50   int64  `json:"p50_us"`
	P90   int64  `json:"p90_us"`
	P95   int64  `json:"p95_us"`
	P99   int64  `json:"p99_us"`
	P999  int64  `json:"p99_9_us"`
	Max   int64  `json:"max_us"`
	HDR   string `json:"hdr"`
}

// NewReport builds the JSON report of r.
func NewReport(meta ReportMeta, r *Result) (*Report, error) {
	rep := &Report{
		Version: ReportVersion, Kind: ReportKind, Target: meta.Target, Plan: meta.Plan,
		Started: r.Start.UTC(), WarmupS: meta.Warmup.Seconds(), MeasuredS: r.Measured.Seconds(), Canceled: r.Canceled,
	}
	s := r.Schedule
	rep.Schedule = ScheduleReport{Offered: s.Offered, Achieved: s.Achieved, Intended: s.Intended, Sent: s.Sent,
		Late: s.Late, LateAfterMS: float64(LateAfter) / 1e6, Dropped: s.Dropped, Canceled: s.Canceled, OutOfSockets: s.OutOfSockets}
	var err error
	if rep.Schedule.Lateness, err = histReport(s.Lateness); err != nil {
		return nil, fmt.Errorf("encoding the lateness histogram: %w", err)
	}
	if rep.Total, err = groupReport(r.Total()); err != nil {
		return nil, err
	}
	rep.Total.Name = "total"
	if rep.Groups, err = groupReports(r.Groups); err != nil {
		return nil, err
	}
	for i := range r.Halves {
		if rep.Halves[i], err = groupReports(r.Halves[i]); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

func groupReports(gs []*GroupStats) ([]GroupReport, error) {
	out := make([]GroupReport, 0, len(gs))
	for _, g := range gs {
		gr, err := groupReport(g)
		if err != nil {
			return nil, err
		}
		out = append(out, gr)
	}
	return out, nil
}

func groupReport(g *GroupStats) (GroupReport, error) {
	gr := GroupReport{Name: g.Name, Requests: g.Requests, Expected: g.Expected, Unexpected: g.Unexpected,
		SuccessRatio: g.SuccessRatio(), Statuses: g.Statuses, Hits: g.Hits, HitBeyond: g.HitBeyond,
		WrongAnswers: g.WrongAnswers, WrongAnswer: g.WrongAnswer, Errors: g.Errors, BytesIn: g.BytesIn, BytesOut: g.BytesOut}
	var err error
	for _, x := range []struct {
		dst **HistReport
		h   *hdrhistogram.Histogram
	}{{&gr.Latency, g.Latency}, {&gr.Service, g.Service}, {&gr.Server, g.Server}} {
		if *x.dst, err = histReport(x.h); err != nil {
			return gr, fmt.Errorf("encoding group %q's histograms: %w", g.Name, err)
		}
	}
	return gr, nil
}

func histReport(h *hdrhistogram.Histogram) (*HistReport, error) {
	if h == nil || h.TotalCount() == 0 {
		return nil, nil
	}
	enc, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return nil, err
	}
	us := func(p float64) int64 { return NearestRank(h, p).Microseconds() }
	return &HistReport{Count: h.TotalCount(), Min: h.Min(), P50: us(50), P90: us(90), P95: us(95), P99: us(99),
		P999: us(99.9), Max: h.Max(), HDR: string(enc)}, nil
}

// WriteJSON writes the report, indented, with a final newline.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// ReadReport reads a report written by WriteJSON, refusing other versions.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	if err := json.NewDecoder(r).Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading a load report: %w", err)
	}
	if rep.Kind != ReportKind {
		return nil, fmt.Errorf("reading a load report: kind %q, want %q", rep.Kind, ReportKind)
	}
	if rep.Version != ReportVersion {
		return nil, fmt.Errorf("reading a load report: version %d, this perfgate reads version %d", rep.Version, ReportVersion)
	}
	return &rep, nil
}

// Result rebuilds the Result the report was made from.
func (rep *Report) Result() (*Result, error) {
	r := &Result{Start: rep.Started, Measured: time.Duration(rep.MeasuredS * 1e9), Canceled: rep.Canceled}
	s := rep.Schedule
	r.Schedule = Schedule{Offered: s.Offered, Achieved: s.Achieved, Intended: s.Intended, Sent: s.Sent,
		Late: s.Late, Dropped: s.Dropped, Canceled: s.Canceled, OutOfSockets: s.OutOfSockets}
	var err error
	if r.Schedule.Lateness, err = decodeHist(s.Lateness); err != nil {
		return nil, fmt.Errorf("reading the lateness histogram: %w", err)
	}
	if r.Groups, err = groupsFromReport(rep.Groups); err != nil {
		return nil, err
	}
	for i := range rep.Halves {
		if r.Halves[i], err = groupsFromReport(rep.Halves[i]); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func groupsFromReport(grs []GroupReport) ([]*GroupStats, error) {
	out := make([]*GroupStats, 0, len(grs))
	for _, gr := range grs {
		g := &GroupStats{Name: gr.Name, Requests: gr.Requests, Expected: gr.Expected, Unexpected: gr.Unexpected,
			Statuses: gr.Statuses, Hits: gr.Hits, HitBeyond: gr.HitBeyond,
			WrongAnswers: gr.WrongAnswers, WrongAnswer: gr.WrongAnswer, Errors: gr.Errors, BytesIn: gr.BytesIn, BytesOut: gr.BytesOut}
		var err error
		for _, x := range []struct {
			dst **hdrhistogram.Histogram
			hr  *HistReport
		}{{&g.Latency, gr.Latency}, {&g.Service, gr.Service}, {&g.Server, gr.Server}} {
			if *x.dst, err = decodeHist(x.hr); err != nil {
				return nil, fmt.Errorf("reading group %q's histograms: %w", gr.Name, err)
			}
		}
		out = append(out, g)
	}
	return out, nil
}

func decodeHist(hr *HistReport) (*hdrhistogram.Histogram, error) {
	if hr == nil {
		return nil, nil
	}
	return hdrhistogram.Decode([]byte(hr.HDR))
}
