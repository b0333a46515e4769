package plan

func (ps *parser) ab(raw map[string]any) {
	m, ok := ps.Table(raw, nil, "ab", "[ab] with pairs = 4")
	if !ok {
		return
	}
	ap := []string{"ab"}
	a := &ps.p.AB
	ps.p.abWritten = true
	ps.Known(m, ap, "[ab]", append([]string{"pairs", "warmup", "measure", "rate", "idle", "idle_cpu", "idle_tx_per_sec"}, sameAnswersKeys...)...)
	ps.sameAnswers(m, ap, a) // parse_sameanswers.go
	if n, ok := ps.Int(m, ap, "pairs", "pairs = 4", 1, 100); ok {
		a.Pairs = int(n)
	}
	if d, ok := ps.dur(m, ap, "warmup", `warmup = "10s"`, false); ok {
		a.Warmup = d
	}
	if d, ok := ps.measured(m, ap, "measure", `measure = "60s"`); ok {
		a.Measure = d
	}
	if r, ok := ps.Num(m, ap, "rate", "rate = 20", 0, true, maxRate); ok {
		a.Rate = r
	}
	if d, ok := ps.dur(m, ap, "idle", `idle = "60s"`, false); ok {
		a.Idle = d
	}
	if c, ok := ps.Num(m, ap, "idle_cpu", "idle_cpu = 2 (percent of one core)", 0, true, 10000); ok {
		a.IdleCPU = c / 100
	}
	if t, ok := ps.Num(m, ap, "idle_tx_per_sec", "idle_tx_per_sec = 1", 0, true, 1e9); ok {
		a.IdleTxPerSec = t
	}
}
