package target

import (
	"fmt"
	"net/http"
	"strconv"
)

// metrics writes the target's gauges in the Prometheus text format.
//
// It is written out here rather than through prometheus/client_golang:
// this module's go.mod names client_golang but not the modules it needs
// (client_model, procfs, xxhash, perks, protobuf), so importing it does not
// build until go.mod carries them. Five unlabelled lines need nothing more.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	for _, m := range []struct {
		name, kind, help string
		value            float64
	}{
		{"capacity_pool_wait_seconds", "gauge", "Mean time requests waited for a worker since the previous scrape.", s.meanWait()},
		{"capacity_pool_in_use", "gauge", "Workers serving a request now.", float64(len(s.workers))},
		{"capacity_queue_length", "gauge", "Requests waiting for a worker now.", float64(s.waiting.Load())},
		{"capacity_served_total", "counter", "Requests served.", float64(s.served.Load())},
		{"capacity_shed_total", "counter", "Requests answered 503: the queue was full or the target was past its failure point.", float64(s.shedCnt.Load())},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n%s %s\n", m.name, m.help, m.name, m.kind, m.name, strconv.FormatFloat(m.value, 'g', -1, 64))
	}
}
