package plan

import (
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/tomlpos"
)

func (ps *parser) thresholds(raw map[string]any) {
	list := ps.Tables(raw, nil, "threshold", `[[threshold]] with metric = "p90", below = "150ms"`)
	for i, m := range list {
		tp := []string{"threshold", strconv.Itoa(i)}
		ps.Known(m, tp, "[[threshold]]", "group", "metric", "below", "min", "side")
		th := Threshold{Side: defaultSide(ps.p.ServerTiming), Line: ps.Line(tp)}
		if g, ok := ps.Str(m, tp, "group", `group = "hello"`); ok {
			found := false
			var names []string
			for _, gr := range ps.p.Groups {
				names = append(names, gr.Name)
				found = found || gr.Name == g
			}
			if !found && len(names) > 0 {
				ps.At(tp, "group", "threshold names group %q, which the plan does not have; write group = %s", g, tomlpos.OneOf(g, names, `"%s"`))
			}
			th.Group = g
		}
		metric, ok := ps.Str(m, tp, "metric", `metric = "p90"`)
		if !ok {
			if _, present := m["metric"]; !present {
				ps.At(tp, "", "this threshold names no metric; write metric = \"p90\" (or \"success\", \"under\")")
			}
			continue
		}
		th.Metric = metric
		below, _ := ps.dur(m, tp, "below", `below = "150ms"`, true)
		_, belowWritten := m["below"]
		minV, _ := ps.Num(m, tp, "min", "min = 99 (percent)", 0, true, 100)
		_, minWritten := m["min"]
		th.Below, th.Min = below, minV/100
		switch {
		case isPercentile(metric):
			if !belowWritten {
				ps.At(tp, "metric", "a %s threshold needs its limit; write below = \"150ms\"", metric)
			}
			if minWritten {
				ps.At(tp, "min", "min does not apply to %s; remove it (it bounds success and under)", metric)
			}
		case metric == "success":
			if !minWritten {
				ps.At(tp, "metric", "a success threshold needs its lowest ratio; write min = 99 (percent)")
			}
			if belowWritten {
				ps.At(tp, "below", "below does not apply to success; remove it, or write metric = \"under\" for the share of requests under a latency")
			}
		case metric == "under":
			if !belowWritten || !minWritten {
				ps.At(tp, "metric", "an under threshold needs the latency and the share; write below = \"150ms\" and min = 90 (percent)")
			}
		default:
			ps.At(tp, "metric", "unknown threshold metric %q; write metric = \"p90\" (any p<N>), \"success\" or \"under\"", metric)
		}
		if s, ok := ps.Str(m, tp, "side", `side = "client"`); ok {
			switch {
			case metric == "success":
				// Ignoring it would let a plan believe it gates the server's view.
				ps.At(tp, "side", "side does not apply to success (the share of requests answered as planned, whoever times them); remove it")
			case s != "client" && s != "server":
				ps.At(tp, "side", "side %q is not a side; write side = %s", s, tomlpos.OneOf(s, []string{"client", "server"}, `"%s"`))
			case s == "server" && ps.p.ServerTiming == "":
				ps.At(tp, "side", "side = \"server\" needs the server's timing header; write server_timing = \"Server-Timing\" at the top of the plan")
			}
			th.Side = s
		}
		if metric == "success" {
			th.Side = "client" // a share of requests answered, whoever times them
		}
		ps.p.Thresholds = append(ps.p.Thresholds, th)
	}
}

// defaultSide is a threshold's side when it writes none: the server's own
// figure when the plan names the header holding it (FerroFED's gate gates
// on it: a runner's hiccup cannot move it), else the client's.
func defaultSide(serverTiming string) string {
	if serverTiming != "" {
		return "server"
	}
	return "client"
}

// isPercentile accepts p<N> with 0 < N < 100 (p50, p90, p99.9) and p100.
func isPercentile(m string) bool {
	if len(m) < 2 || m[0] != 'p' {
		return false
	}
	f, err := strconv.ParseFloat(m[1:], 64)
	return err == nil && f > 0 && f <= 100 && !strings.ContainsAny(m[1:], "eExX+-_")
}
