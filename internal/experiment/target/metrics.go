package target

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metricsHandler serves the target's gauges and counters through
// client_golang. The registry is the target's own, not the default one:
// the default carries the Go and process collectors, whose goroutine and
// memory gauges also move with the load and would only crowd the pool's
// gauges the experiments' tests read.
func (s *Server) metricsHandler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.duration,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "capacity_pool_wait_seconds",
			Help: "Mean time requests waited for a worker since the previous scrape."}, s.meanWait),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "capacity_pool_in_use",
			Help: "Workers serving a request now."}, func() float64 { return float64(len(s.workers)) }),
		// In flight counts every request inside the target, waiting or
		// served: it follows the offered load and never runs out itself,
		// which the first-resource rule must tell from the pool and queue.
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "capacity_in_flight",
			Help: "Requests in the target now: waiting for a worker or being served."}, func() float64 { return float64(s.inside.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "capacity_queue_length",
			Help: "Requests waiting for a worker now."}, func() float64 { return float64(s.waiting.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capacity_served_total",
			Help: "Requests served."}, func() float64 { return float64(s.served.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "capacity_shed_total",
			Help: "Requests answered 503: the queue was full or the target was past its failure point."}, func() float64 { return float64(s.shedCnt.Load()) }),
	)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
