package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/perfgate/perfgate/internal/plan"
)

// scraper reads Prometheus endpoints every interval while the run goes on.
type scraper struct {
	endpoints []string                      // each URL once, in the order the plan lists them
	reads     map[string][]plan.GaugeSource // what to read from each URL
	pid       int                           // a target process on this machine whose memory is sampled too; 0 = none
	every     time.Duration
	client    *http.Client
	origin    time.Time

	mu     sync.Mutex
	series map[string]*Gauge // endpoint + "\x00" + name
	order  []string          // first seen first: the endpoint's own order breaks ties
	errs   map[string]string // the last scrape error per endpoint, or per endpoint and metric
	prev   map[string]prevRead
}

func newScraper(sources []plan.GaugeSource, every time.Duration, origin time.Time) *scraper {
	s := &scraper{reads: map[string][]plan.GaugeSource{}, every: every, origin: origin,
		client: &http.Client{Timeout: every * 9 / 10}, series: map[string]*Gauge{}, errs: map[string]string{}, prev: map[string]prevRead{}}
	for _, src := range sources {
		if _, ok := s.reads[src.URL]; !ok {
			s.endpoints = append(s.endpoints, src.URL)
		}
		s.reads[src.URL] = append(s.reads[src.URL], src)
	}
	return s
}

// run scrapes until ctx ends; the caller waits for it to return.
func (s *scraper) run(ctx context.Context) {
	if len(s.endpoints) == 0 && s.pid == 0 {
		return
	}
	t := time.NewTicker(s.every)
	defer t.Stop()
	s.scrapeAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.scrapeAll(ctx)
		}
	}
}

func (s *scraper) scrapeAll(ctx context.Context) {
	if s.pid > 0 {
		at := time.Since(s.origin).Seconds()
		v, err := readRSS(s.pid)
		s.mu.Lock()
		if err != nil {
			s.errs["pid"] = err.Error()
		} else {
			s.add("/proc", sample{name: rssName(s.pid), value: v}, at)
		}
		s.mu.Unlock()
	}
	for _, ep := range s.endpoints {
		at := time.Since(s.origin).Seconds()
		fams, err := s.scrape(ctx, ep)
		s.mu.Lock()
		if err != nil {
			if ctx.Err() == nil {
				s.errs[ep] = err.Error()
			}
			s.mu.Unlock()
			continue
		}
		seen := map[string]bool{}
		for _, src := range s.reads[ep] {
			var vals []sample
			if src.Metric == "" {
				vals, err = plainGauges(fams)
			} else {
				vals, err = s.readMetric(ep, fams, src, at)
			}
			key := ep
			if src.Metric != "" {
				key = ep + " " + src.Metric
			}
			if err != nil {
				s.errs[key] = fmt.Sprintf("scraping %s: %v", ep, err)
				continue
			}
			for _, v := range vals {
				if !seen[v.name] {
					seen[v.name] = true
					s.add(ep, v, at)
				}
			}
		}
		s.mu.Unlock()
	}
}

// add records one sample; the caller holds mu.
func (s *scraper) add(ep string, v sample, at float64) {
	key := ep + "\x00" + v.name
	g := s.series[key]
	if g == nil {
		g = &Gauge{Endpoint: ep, Name: v.name, Kind: v.kind}
		s.series[key] = g
		s.order = append(s.order, key)
	}
	g.Samples = append(g.Samples, GaugeSample{AtS: at, Value: v.value})
}

func (s *scraper) scrape(ctx context.Context, ep string) ([]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", ep, nil)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", ep, err)
	}
	req.Header.Set("Accept", accept)
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", ep, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("scraping %s: status %d", ep, resp.StatusCode)
	}
	fams, err := decodeFamilies(io.LimitReader(resp.Body, 8<<20), expfmt.ResponseFormat(resp.Header))
	if err != nil {
		return nil, fmt.Errorf("scraping %s: %w", ep, err)
	}
	return fams, nil
}

// gauges returns what was scraped, in first-seen order, and one note per
// endpoint (or named metric) that failed.
func (s *scraper) result() ([]Gauge, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Gauge
	for _, k := range s.order {
		out = append(out, *s.series[k])
	}
	var notes []string
	for _, ep := range s.endpoints {
		if e, ok := s.errs[ep]; ok {
			notes = append(notes, "gauges: "+e)
		}
		for _, src := range s.reads[ep] {
			if e, ok := s.errs[ep+" "+src.Metric]; ok && src.Metric != "" {
				notes = append(notes, "gauges: "+e)
			}
		}
	}
	if e, ok := s.errs["pid"]; ok {
		notes = append(notes, "gauges: "+e)
	}
	return out, notes
}

type sample struct {
	name  string
	value float64
	kind  string // "" for a gauge as read; "rate" or "quantile" (counters.go)
}

// accept asks for the delimited protobuf format first (no text to parse)
// and the text format after it, as Prometheus itself does.
var accept = string(expfmt.FmtProtoDelim) + ";q=0.7," + string(expfmt.FmtText) + ";q=0.3"

// parseGauges reads the gauges of one scrape, as a plain endpoint in
// gauges is read.
func parseGauges(r io.Reader, format expfmt.Format) ([]sample, error) {
	fams, err := decodeFamilies(r, format)
	if err != nil {
		return nil, err
	}
	return plainGauges(fams)
}

// decodeFamilies reads one scrape in the format the endpoint answered with
// (prometheus/common/expfmt; an unknown Content-Type is read as text, as
// expfmt does).
//
// expfmt's text decoder hands the families back in map order, so they are
// sorted by name: the order client_golang serves them in, and the same at
// every scrape, which the first-resource tie-break relies on.
func decodeFamilies(r io.Reader, format expfmt.Format) ([]*dto.MetricFamily, error) {
	dec := expfmt.NewDecoder(r, format)
	var fams []*dto.MetricFamily
	for {
		f := &dto.MetricFamily{}
		err := dec.Decode(f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading the gauges: %w", err)
		}
		fams = append(fams, f)
	}
	slices.SortStableFunc(fams, func(a, b *dto.MetricFamily) int { return strings.Compare(a.GetName(), b.GetName()) })
	return fams, nil
}

// plainGauges keeps the gauges and untyped values. Counters, histograms
// and summaries only ever rise, so they cannot "leave a resting value" as
// they are: they are read only when gauges names them (counters.go). A
// sample is named as model.Metric writes it: `name{label="value", ...}`.
func plainGauges(all []*dto.MetricFamily) ([]sample, error) {
	var fams []*dto.MetricFamily
	for _, f := range all {
		if t := f.GetType(); t == dto.MetricType_GAUGE || t == dto.MetricType_UNTYPED {
			fams = append(fams, f)
		}
	}
	vec, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, fams...)
	if err != nil {
		return nil, fmt.Errorf("reading the gauges: %w", err)
	}
	var out []sample
	for _, v := range vec {
		if math.IsNaN(float64(v.Value)) {
			continue
		}
		out = append(out, sample{name: v.Metric.String(), value: float64(v.Value)})
	}
	return out, nil
}

// gauges finds each gauge's resting value (its samples during the first
// stage) and when it left it: the first later sample further from the
// mean than three times the first stage's spread, a tenth of the resting
// value, or 1e-9 when the gauge rested still at zero. The move is drawn on
// the gauge's chart; which gauge ran out first is ranOut's question, read
// across stages (ranout.go).
func gauges(r *Report) {
	if len(r.Gauges) == 0 || len(r.Stages) == 0 {
		return
	}
	restEnd := r.Stages[0].StartS + r.Stages[0].LengthS
	for i := range r.Gauges {
		g := &r.Gauges[i]
		g.MovedAtS = nil
		var n, sum float64
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, s := range g.Samples {
			if s.AtS <= restEnd {
				n, sum = n+1, sum+s.Value
				lo, hi = math.Min(lo, s.Value), math.Max(hi, s.Value)
			}
		}
		if n == 0 {
			continue
		}
		g.Rest, g.Spread = sum/n, hi-lo
		limit := math.Max(math.Max(3*g.Spread, 0.1*math.Abs(g.Rest)), 1e-9)
		for _, s := range g.Samples {
			if s.AtS > restEnd && math.Abs(s.Value-g.Rest) > limit {
				at := s.AtS
				g.MovedAtS = &at
				break
			}
		}
	}
	ranOut(r)
}
