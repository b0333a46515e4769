package judge

import "fmt"

// steady is a schedule that kept to the plan: 20 arrivals/s for 60 s.
func steady() Schedule {
	return Schedule{Offered: 20, Achieved: 20, Intended: 1200, Sent: 1200, Answered: 1200, LatenessP99: 0.2}
}

// group is a steady group: p99 three times p50, both halves alike.
func group(name string, p50 float64) GroupFigures {
	return GroupFigures{
		Name: name, Requests: 600, P50: p50, P99: 3 * p50,
		Halves: [2]Half{{P50: p50, P90: 2 * p50, Count: 300}, {P50: p50, P90: 2 * p50, Count: 300}},
	}
}

var latencyMetric = Metric{ID: "p50.search", Class: Latency, Unit: "ms"}

// pairs builds an input of one metric with the given per-pair values.
func pairs(m Metric, base, head []float64) Input {
	in := Input{Metrics: []Metric{m}}
	for i := range base {
		lead := [2]string{"base", "head"}[i%2]
		in.Base = append(in.Base, Phase{Pair: i + 1, Lead: lead, Values: map[string]float64{m.ID: base[i]},
			Groups: []GroupFigures{group("search", 5), group("item", 2)}, Schedule: steady()})
		in.Head = append(in.Head, Phase{Pair: i + 1, Lead: lead, Values: map[string]float64{m.ID: head[i]},
			Groups: []GroupFigures{group("search", 5), group("item", 2)}, Schedule: steady()})
	}
	return in
}

func four(v float64) []float64 { return []float64{v, v, v, v} }

// full is an A/A input of every metric kind over 4 pairs.
func full() Input {
	ms := []Metric{
		{ID: "throughput", Class: Throughput, Unit: "req/s", HigherIsBetter: true},
		{ID: "p50.search", Class: Latency, Unit: "ms"},
		{ID: "p99.search", Class: Latency, Unit: "ms"},
		{ID: "peak_memory", Class: Memory, Unit: "bytes"},
		{ID: "cpu_per_request", Class: CPU, Unit: "ms"},
		{ID: "tx_per_request", Class: Transactions, Unit: "tx"},
	}
	vals := map[string]float64{"throughput": 20, "p50.search": 5, "p99.search": 15, "peak_memory": 50 << 20, "cpu_per_request": 1.5, "tx_per_request": 1}
	in := Input{Metrics: ms}
	for i := 0; i < 4; i++ {
		for _, arm := range []*[]Phase{&in.Base, &in.Head} {
			v := map[string]float64{}
			for k, x := range vals {
				v[k] = x
			}
			*arm = append(*arm, Phase{Pair: i + 1, Lead: fmt.Sprint([2]string{"base", "head"}[i%2]), Values: v,
				Groups: []GroupFigures{group("search", 5), group("item", 2)}, Schedule: steady()})
		}
	}
	return in
}
