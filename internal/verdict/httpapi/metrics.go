package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/perfgate/perfgate/internal/verdict"
)

// Metrics are the service's Prometheus series: requests by route and
// status, their latency, and attempts by verdict and CPU model.
type Metrics struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	attempts *prometheus.CounterVec
}

// NewMetrics registers the series on a registry of their own (with the Go
// runtime and process collectors).
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfgate_verdictd_requests_total", Help: "HTTP requests by route and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "perfgate_verdictd_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route"}),
		attempts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "perfgate_verdictd_attempts_total", Help: "Attempts stored, by verdict and CPU model.",
		}, []string{"verdict", "cpu_model"}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.attempts,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Attempt counts a stored attempt; the service calls it (Config.OnAttempt).
func (m *Metrics) Attempt(a *verdict.Attempt) {
	v := a.Verdict
	if v == "" {
		v = "none"
	}
	model := a.Facts.CPUModel
	if model == "" {
		model = "unknown"
	}
	m.attempts.WithLabelValues(v, model).Inc()
}

func (m *Metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
