package experiment

import (
	"fmt"
	"math"
	"strconv"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/model"

	"github.com/perfgate/perfgate/internal/plan"
)

// A counter only rises and a histogram only adds observations, so neither
// can be read as it stands: a counter is read as its rate per second
// between two scrapes (CPU seconds, hits, misses), a histogram as a
// quantile of the observations made between two scrapes (an acquire wait's
// p99 in that interval), as Prometheus' rate() and histogram_quantile()
// read them. The first scrape of each only sets the starting point.

// prevRead is one series' previous scrape.
type prevRead struct {
	at     float64
	value  float64   // a counter's value
	uppers []float64 // a histogram's bucket bounds, +Inf last
	counts []float64 // its cumulative counts, matching uppers
}

// readMetric reads the family src names from one scrape; the caller holds
// mu (readMetric keeps each series' previous scrape).
func (s *scraper) readMetric(ep string, fams []*dto.MetricFamily, src plan.GaugeSource, at float64) ([]sample, error) {
	var fam *dto.MetricFamily
	for _, f := range fams {
		if f.GetName() == src.Metric {
			fam = f
		}
	}
	if fam == nil {
		return nil, fmt.Errorf("no metric %s in the scrape; gauges names it with metric = %q", src.Metric, src.Metric)
	}
	q := src.Quantile
	if q == 0 {
		q = 0.99
	}
	qs := strconv.FormatFloat(q, 'g', -1, 64)
	var out []sample
	for _, m := range fam.GetMetric() {
		labels := model.Metric{model.MetricNameLabel: model.LabelValue(src.Metric)}
		for _, l := range m.GetLabel() {
			labels[model.LabelName(l.GetName())] = model.LabelValue(l.GetValue())
		}
		series := labels.String()
		key := ep + "\x00" + series
		switch fam.GetType() {
		case dto.MetricType_GAUGE, dto.MetricType_UNTYPED:
			v := m.GetGauge().GetValue()
			if fam.GetType() == dto.MetricType_UNTYPED {
				v = m.GetUntyped().GetValue()
			}
			if !math.IsNaN(v) {
				out = append(out, sample{name: series, value: v})
			}
		case dto.MetricType_COUNTER:
			v := m.GetCounter().GetValue()
			p, ok := s.prev[key]
			s.prev[key] = prevRead{at: at, value: v}
			if ok && at > p.at {
				out = append(out, sample{name: "rate(" + series + ")", value: counterRate(p.value, v, at-p.at), kind: "rate"})
			}
		case dto.MetricType_HISTOGRAM:
			h := m.GetHistogram()
			var uppers, counts []float64
			for _, b := range h.GetBucket() {
				if !math.IsInf(b.GetUpperBound(), 1) {
					uppers, counts = append(uppers, b.GetUpperBound()), append(counts, float64(b.GetCumulativeCount()))
				}
			}
			uppers, counts = append(uppers, math.Inf(1)), append(counts, float64(h.GetSampleCount()))
			p, ok := s.prev[key]
			s.prev[key] = prevRead{at: at, uppers: uppers, counts: counts}
			if !ok {
				continue
			}
			if v, ok := intervalQuantile(q, p, uppers, counts); ok {
				out = append(out, sample{name: "histogram_quantile(" + qs + ", " + series + ")", value: v, kind: "quantile"})
			}
		case dto.MetricType_SUMMARY:
			// A summary's quantiles are the client's own, over its own
			// window: read as the client wrote them.
			for _, sq := range m.GetSummary().GetQuantile() {
				if sq.GetQuantile() == q && !math.IsNaN(sq.GetValue()) {
					labels[model.QuantileLabel] = model.LabelValue(qs)
					out = append(out, sample{name: labels.String(), value: sq.GetValue(), kind: "quantile"})
				}
			}
		default:
			return nil, fmt.Errorf("metric %s is a %s, which perfgate does not read", src.Metric, fam.GetType())
		}
	}
	return out, nil
}

// counterRate is the counter's increase per second; a counter that went
// down was restarted, and counts from zero again.
func counterRate(before, now, seconds float64) float64 {
	d := now - before
	if d < 0 {
		d = now
	}
	return d / seconds
}

// intervalQuantile is the q-quantile of the observations between the
// previous scrape and this one, interpolated inside its bucket as
// histogram_quantile does; false when nothing was observed in between.
// A restarted histogram (fewer observations than before) or one whose
// buckets changed counts from zero again.
func intervalQuantile(q float64, p prevRead, uppers, counts []float64) (float64, bool) {
	delta := make([]float64, len(counts))
	copy(delta, counts)
	if len(p.counts) == len(counts) && p.counts[len(p.counts)-1] <= counts[len(counts)-1] {
		for i := range delta {
			if p.uppers[i] != uppers[i] {
				copy(delta, counts)
				break
			}
			delta[i] -= p.counts[i]
		}
	}
	return bucketQuantile(q, uppers, delta)
}

// bucketQuantile reads the q-quantile off cumulative bucket counts (the
// last bucket +Inf): linear inside the bucket it falls in, the highest
// finite bound when it falls in +Inf, as Prometheus does.
func bucketQuantile(q float64, uppers, counts []float64) (float64, bool) {
	n := len(counts)
	if n == 0 || counts[n-1] <= 0 {
		return 0, false
	}
	rank := q * counts[n-1]
	i := 0
	for i < n-1 && counts[i] < rank {
		i++
	}
	if math.IsInf(uppers[i], 1) {
		if i == 0 {
			return 0, false
		}
		return uppers[i-1], true
	}
	lower, below := 0.0, 0.0
	if i > 0 {
		lower, below = uppers[i-1], counts[i-1]
	}
	in := counts[i] - below
	if in <= 0 {
		return uppers[i], true
	}
	return lower + (uppers[i]-lower)*(rank-below)/in, true
}
