package judge

import (
	"math"
	"strings"
	"testing"
)

var throughputMetric = Metric{ID: "throughput", Class: Throughput, Unit: "req/s", HigherIsBetter: true}
var txMetric = Metric{ID: "tx_per_request", Class: Transactions, Unit: "tx"}

func TestMetricBoundaries(t *testing.T) {
	tests := []struct {
		name       string
		in         Input
		code       Code
		breach     bool
		breached   int
		threshold  float64
		zeroBase   bool
		failSubstr string
	}{
		{name: "A/A passes", in: pairs(latencyMetric, four(100), four(100)), code: Pass, threshold: 0.25},
		{name: "exactly at the tolerance is no breach", in: pairs(latencyMetric, four(100), four(125)), code: Pass, breached: 0, threshold: 0.25},
		{name: "exactly at the tolerance, decimals", in: pairs(latencyMetric, four(0.4), four(0.5)), code: Pass, threshold: 0.25},
		{name: "just over the tolerance fails", in: pairs(latencyMetric, four(100), four(125.01)), code: Regression, breach: true, breached: 4, threshold: 0.25, failSubstr: "p50.search: the head is worse by 25.01 % (125 vs 100 ms; threshold 25 %)"},
		{name: "a 30 % slowdown fails", in: pairs(latencyMetric, four(10), four(13)), code: Regression, breach: true, breached: 4, threshold: 0.25},
		// Base phases 100,100,100,140: median 100, spread 40 % over the 25 % tolerance.
		{name: "floor above tolerance absorbs 30 %", in: pairs(latencyMetric, []float64{100, 100, 100, 140}, four(130)), code: Pass, threshold: 0.40},
		{name: "floor above tolerance, beyond it fails", in: pairs(latencyMetric, []float64{100, 100, 100, 140}, four(141)), code: Regression, breach: true, breached: 3, threshold: 0.40},
		// Head 140,140,115,115: median 127.5 breaches, but 2 of 4 pairs is not most.
		{name: "2 of 4 pairs breaching is not most", in: pairs(latencyMetric, four(100), []float64{140, 140, 115, 115}), code: Pass, breach: true, breached: 2, threshold: 0.25},
		{name: "3 of 4 pairs breaching fails", in: pairs(latencyMetric, four(100), []float64{140, 140, 140, 115}), code: Regression, breach: true, breached: 3, threshold: 0.25},
		{name: "3 of 5 pairs is most", in: pairs(latencyMetric, []float64{100, 100, 100, 100, 100}, []float64{140, 140, 140, 115, 115}), code: Regression, breach: true, breached: 3, threshold: 0.25},
		{name: "zero base, zero head is equal", in: pairs(txMetric, four(0), four(0)), code: Pass, threshold: 0.10, zeroBase: true},
		{name: "zero base, any rise breaches", in: pairs(txMetric, four(0), four(0.01)), code: Regression, breach: true, breached: 4, threshold: 0.10, zeroBase: true, failSubstr: "rose from 0 to 0.01 tx"},
		// Base 0,0,1,1: median 0.5 and spread 100 %, so the floor swallows the rise.
		{name: "zero base in 2 of 4 pairs only", in: pairs(txMetric, []float64{0, 0, 1, 1}, []float64{1, 1, 1, 1}), code: Pass, breached: 2, threshold: 1},
		{name: "throughput 20 % lower is at the tolerance", in: pairs(throughputMetric, four(20), four(16)), code: Pass, threshold: 0.20},
		{name: "throughput over 20 % lower fails", in: pairs(throughputMetric, four(20), four(15.9)), code: Regression, breach: true, breached: 4, threshold: 0.20, failSubstr: "throughput: the head is lower by 20.5 %"},
		{name: "throughput higher is never worse", in: pairs(throughputMetric, four(20), four(40)), code: Pass, threshold: 0.20},
		{name: "throughput from zero base is never worse", in: pairs(throughputMetric, four(0), four(5)), code: Pass, threshold: 0.20, zeroBase: true},
		{name: "latency better is never worse", in: pairs(latencyMetric, four(100), four(10)), code: Pass, threshold: 0.25},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.Rule = RuleMedians
			v := Judge(tc.in)
			if v.Code != tc.code {
				t.Fatalf("code %d, want %d; verdict %+v", v.Code, tc.code, v)
			}
			r := v.Metrics[0]
			if r.Breach != tc.breach || r.PairsBreached != tc.breached || r.ZeroBase != tc.zeroBase {
				t.Errorf("breach %v pairs %d zero %v, want %v %d %v", r.Breach, r.PairsBreached, r.ZeroBase, tc.breach, tc.breached, tc.zeroBase)
			}
			if math.Abs(r.Threshold-tc.threshold) > 1e-12 {
				t.Errorf("threshold %v, want %v", r.Threshold, tc.threshold)
			}
			if r.Fail != (tc.code == Regression) {
				t.Errorf("fail %v with code %d", r.Fail, v.Code)
			}
			if tc.failSubstr != "" && (len(v.Failures) != 1 || !strings.Contains(v.Failures[0], tc.failSubstr)) {
				t.Errorf("failures %q, want one holding %q", v.Failures, tc.failSubstr)
			}
			if tc.breach && !r.Fail && !containsAll(v.Notes, r.ID, "not most") {
				t.Errorf("a breach of the median that does not fail needs a note; notes %q", v.Notes)
			}
		})
	}
}

func containsAll(lines []string, subs ...string) bool {
	for _, l := range lines {
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(l, s)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestMedianAndSpread(t *testing.T) {
	in := pairs(latencyMetric, []float64{90, 100, 110, 120}, []float64{100, 100, 100, 100})
	in.Rule = RuleMedians
	r := Judge(in).Metrics[0]
	if r.Base != 105 || r.Head != 100 {
		t.Errorf("medians %v %v, want 105 100", r.Base, r.Head)
	}
	if want := 15.0 / 105; math.Abs(r.BaseSpread-want) > 1e-12 || r.HeadSpread != 0 || r.Floor != r.BaseSpread {
		t.Errorf("spreads %v %v floor %v, want %v 0", r.BaseSpread, r.HeadSpread, r.Floor, want)
	}
	if want := 100.0 / 105; math.Abs(r.Ratio-want) > 1e-12 || math.Abs(r.Worse-(want-1)) > 1e-12 {
		t.Errorf("ratio %v worse %v", r.Ratio, r.Worse)
	}
	if got := r.PairRatios; len(got) != 4 || math.Abs(got[0]-100.0/90) > 1e-12 || got[3] != 100.0/120 {
		t.Errorf("pair ratios %v", got)
	}
}

// The default tolerance is the rule's: 5 % for latency and CPU under the
// paired rule, FerroFED's gate's 25 % under its own.
func TestDefaultToleranceByRule(t *testing.T) {
	for _, tc := range []struct {
		rule string
		head float64
		code Code
	}{
		{RulePaired, 105, Pass}, {RulePaired, 106, Regression},
		{RuleMedians, 125, Pass}, {RuleMedians, 126, Regression},
	} {
		in := pairs(latencyMetric, four(100), four(tc.head))
		in.Rule = tc.rule
		v := Judge(in)
		if v.Code != tc.code || v.Metrics[0].ToleranceSource != "default" || v.Metrics[0].Tolerance != DefaultToleranceOf(tc.rule, Latency) {
			t.Errorf("rule %s, head %v: code %v at tolerance %v (%s), want %v at the default", tc.rule, tc.head, v.Code, v.Metrics[0].Tolerance, v.Metrics[0].ToleranceSource, tc.code)
		}
	}
	if DefaultToleranceOf(RulePaired, Latency) != 0.05 || DefaultToleranceOf(RuleMedians, Latency) != 0.25 || DefaultToleranceOf(RuleMedians, CPU) != 0.25 {
		t.Errorf("defaults: paired latency %v, medians latency %v, medians cpu %v; want 5 %%, 25 %%, 25 %%", DefaultToleranceOf(RulePaired, Latency), DefaultToleranceOf(RuleMedians, Latency), DefaultToleranceOf(RuleMedians, CPU))
	}
}

func TestToleranceOverrides(t *testing.T) {
	p99 := Metric{ID: "p99.search", Class: Latency, Unit: "ms"}
	cpu := Metric{ID: "cpu_per_request", Class: CPU, Unit: "ms"}
	in := Input{Metrics: []Metric{latencyMetric, p99, cpu}}
	base := map[string]float64{"p50.search": 10, "p99.search": 30, "cpu_per_request": 1}
	head := map[string]float64{"p50.search": 14, "p99.search": 36, "cpu_per_request": 1.3}
	for i := 1; i <= 4; i++ {
		in.Base = append(in.Base, Phase{Pair: i, Values: base, Schedule: steady()})
		in.Head = append(in.Head, Phase{Pair: i, Values: head, Schedule: steady()})
	}
	tests := []struct {
		name   string
		tol    map[string]float64
		fail   []string
		source map[string]string
	}{
		{name: "defaults", fail: []string{"p50.search", "p99.search", "cpu_per_request"}, source: map[string]string{"p50.search": "default", "p99.search": "default"}},
		{name: "class loosens latency", tol: map[string]float64{"latency": 0.5}, fail: []string{"cpu_per_request"}, source: map[string]string{"p50.search": "class"}},
		{name: "metric beats class", tol: map[string]float64{"latency": 0.5, "p99.search": 0.1}, fail: []string{"p99.search", "cpu_per_request"}, source: map[string]string{"p50.search": "class", "p99.search": "metric"}},
		{name: "metric override loosens one", tol: map[string]float64{"cpu": 0.35, "p50.search": 0.45}, fail: []string{"p99.search"}, source: map[string]string{"cpu_per_request": "class", "p50.search": "metric", "p99.search": "default"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := in
			in.Tolerance = tc.tol
			v := Judge(in)
			var failed []string
			for _, r := range v.Metrics {
				if r.Fail {
					failed = append(failed, r.ID)
				}
				if want, ok := tc.source[r.ID]; ok && r.ToleranceSource != want {
					t.Errorf("%s tolerance from %s, want %s", r.ID, r.ToleranceSource, want)
				}
			}
			if strings.Join(failed, ",") != strings.Join(tc.fail, ",") {
				t.Errorf("failed %v, want %v", failed, tc.fail)
			}
			if want := map[bool]Code{true: Regression, false: Pass}[len(tc.fail) > 0]; v.Code != want {
				t.Errorf("code %d, want %d", v.Code, want)
			}
		})
	}
}

func TestUnexpectedStatuses(t *testing.T) {
	t.Run("head fails naming group and count", func(t *testing.T) {
		in := full()
		in.Head[1].Groups[0].Unexpected = map[string]uint64{"500": 2}
		in.Head[3].Groups[0].Unexpected = map[string]uint64{"500": 1, "error": 1}
		v := Judge(in)
		if v.Code != Regression || len(v.Failures) != 1 {
			t.Fatalf("code %d failures %q, want one failure", v.Code, v.Failures)
		}
		// A report from before statuses and failures were split holds both
		// in Unexpected; the judge still tells them apart.
		if want := "head: group search: 3 answers the plan does not name (500 x3), 1 requests with no answer (error x1)"; v.Failures[0] != want {
			t.Errorf("failure %q, want %q", v.Failures[0], want)
		}
	})
	t.Run("base is a note", func(t *testing.T) {
		in := full()
		in.Base[0].Groups[1].Unexpected = map[string]uint64{"404": 7}
		v := Judge(in)
		if v.Code != Pass || !containsAll(v.Notes, "base: group item: 7 answers", "404 x7") {
			t.Errorf("code %d notes %q, want a pass with a note on the base", v.Code, v.Notes)
		}
	})
	t.Run("zero counts are nothing", func(t *testing.T) {
		in := full()
		in.Head[0].Groups[0].Unexpected = map[string]uint64{"500": 0}
		if v := Judge(in); v.Code != Pass {
			t.Errorf("code %d, want pass: %q", v.Code, v.Failures)
		}
	})
}

func TestIdleLimits(t *testing.T) {
	tests := []struct {
		name    string
		idle    Idle
		cpuFail bool
		txFail  bool
		reason  string
	}{
		{name: "quiet", idle: Idle{Seconds: 60, CPU: 0.005, TxPerSec: 0.1, StoreMeasured: true}},
		{name: "CPU just under", idle: Idle{Seconds: 60, CPU: 0.0199, StoreMeasured: true}},
		{name: "CPU exactly at the limit fails", idle: Idle{Seconds: 60, CPU: 0.02, StoreMeasured: true}, cpuFail: true, reason: "idle: the head used 2.00 % of one core over 60 s, limit under 2.00 %"},
		{name: "transactions just under", idle: Idle{Seconds: 60, TxPerSec: 0.99, StoreMeasured: true}},
		{name: "transactions exactly at the limit fail", idle: Idle{Seconds: 60, TxPerSec: 1, StoreMeasured: true}, txFail: true, reason: "idle: the head's store committed 1.00 transactions/s over 60 s, limit under 1.00/s"},
		{name: "busy loop", idle: Idle{Seconds: 60, CPU: 0.9, TxPerSec: 8000, StoreMeasured: true}, cpuFail: true, txFail: true},
		{name: "no store: transactions not judged", idle: Idle{Seconds: 60, TxPerSec: 5}},
		{name: "own limits", idle: Idle{Seconds: 30, CPU: 0.04, CPULimit: 0.05, TxPerSec: 3, TxLimit: 3, StoreMeasured: true}, txFail: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := full()
			in.Idle = &tc.idle
			v := Judge(in)
			if v.Idle == nil || v.Idle.CPUFail != tc.cpuFail || v.Idle.TxFail != tc.txFail {
				t.Fatalf("idle %+v, want cpu fail %v tx fail %v", v.Idle, tc.cpuFail, tc.txFail)
			}
			if want := map[bool]Code{true: Regression, false: Pass}[tc.cpuFail || tc.txFail]; v.Code != want {
				t.Errorf("code %d, want %d", v.Code, want)
			}
			if tc.reason != "" && (len(v.Failures) != 1 || v.Failures[0] != tc.reason) {
				t.Errorf("failures %q, want %q", v.Failures, tc.reason)
			}
			if v.Idle.CPULimit == 0 || v.Idle.TxLimit == 0 {
				t.Errorf("limits not filled: %+v", v.Idle)
			}
		})
	}
}

// An idle failure stands even when the load phases cannot be judged: its
// limits compare with nothing, so a stalled pair does not unsay it.
func TestIdleFailureBeatsCannotJudge(t *testing.T) {
	in := full()
	in.Idle = &Idle{Seconds: 60, CPU: 0.3, StoreMeasured: true}
	in.Base[0].Schedule.Dropped = 500
	v := Judge(in)
	if len(v.CannotJudge) == 0 {
		t.Fatal("the dropped arrivals gave no cannot-judge reason")
	}
	if v.Code != Regression {
		t.Errorf("code %d, want %d (idle failed)", v.Code, Regression)
	}
	in.Idle = &Idle{Seconds: 60, CPU: 0.001, StoreMeasured: true}
	if v := Judge(in); v.Code != CannotJudge {
		t.Errorf("quiet idle, dropped arrivals: code %d, want %d", v.Code, CannotJudge)
	}
}

// A wrong status from the head stands even when the load phases cannot be
// judged, unless the base answered that group wrong too or the head's
// failures are errors a stalled runner can cause.
func TestWrongStatusBeatsCannotJudge(t *testing.T) {
	tests := []struct {
		name string
		head map[string]uint64
		base map[string]uint64
		want Code
	}{
		{"head 500, base right", map[string]uint64{"500": 40}, nil, Regression},
		{"head 500 and timeouts, base right", map[string]uint64{"500": 40, "timeout": 3}, nil, Regression},
		{"head timeouts only", map[string]uint64{"timeout": 40}, nil, CannotJudge},
		{"head errors only", map[string]uint64{"connection reset": 5}, nil, CannotJudge},
		{"base wrong in the same group", map[string]uint64{"500": 40}, map[string]uint64{"503": 2}, CannotJudge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := full()
			in.Base[0].Schedule.Dropped = 500
			in.Head[2].Groups[0].Unexpected = tc.head
			in.Base[1].Groups[0].Unexpected = tc.base
			v := Judge(in)
			if len(v.CannotJudge) == 0 {
				t.Fatal("the dropped arrivals gave no cannot-judge reason")
			}
			if v.Code != tc.want {
				t.Errorf("code %d, want %d; failures %q", v.Code, tc.want, v.Failures)
			}
			if !containsAll(v.Failures, "head: group search") {
				t.Errorf("failures %q do not name the group", v.Failures)
			}
		})
	}
}

func TestInvalidInputCannotBeJudged(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Input)
		reason string
	}{
		{name: "no pairs", change: func(in *Input) { in.Base, in.Head = nil, nil }, reason: "at least one pair is needed"},
		{name: "pairs differ", change: func(in *Input) { in.Head = in.Head[:3] }, reason: "4 base and 3 head phases"},
		{name: "missing value", change: func(in *Input) { delete(in.Head[2].Values, "p99.search") }, reason: `head pair 3 has no value for metric "p99.search"`},
		{name: "NaN value", change: func(in *Input) { in.Base[0].Values["throughput"] = math.NaN() }, reason: `base pair 1 has NaN for metric "throughput"`},
		{name: "negative value", change: func(in *Input) { in.Base[0].Values["peak_memory"] = -1 }, reason: "values are finite and 0 or more"},
		{name: "unknown tolerance", change: func(in *Input) { in.Tolerance = map[string]float64{"p99.serch": 0.3} }, reason: `tolerance "p99.serch" names no metric and no class`},
		{name: "negative tolerance", change: func(in *Input) { in.Tolerance = map[string]float64{"latency": -0.1} }, reason: `tolerance "latency" is -0.1`},
		{name: "unknown class", change: func(in *Input) { in.Metrics[0].Class = "speed" }, reason: `class "speed"`},
		{name: "pair numbers differ", change: func(in *Input) { in.Head[1].Pair = 7 }, reason: "phase 2 is pair 2 in the base and pair 7 in the head"},
		{name: "no arrivals", change: func(in *Input) { in.Base[0].Schedule = Schedule{} }, reason: "base pair 1 had no arrivals due"},
		{name: "infinite latency", change: func(in *Input) { in.Head[0].Groups[0].P99 = math.Inf(1) }, reason: `head pair 1 group "search" has a latency of +Inf`},
		{name: "NaN idle", change: func(in *Input) { in.Idle = &Idle{CPU: math.NaN()} }, reason: "the idle phase has a figure of NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := full()
			tc.change(&in)
			v := Judge(in)
			if v.Code != CannotJudge || !containsAll(v.CannotJudge, tc.reason) {
				t.Errorf("code %d reasons %q, want 2 with %q", v.Code, v.CannotJudge, tc.reason)
			}
		})
	}
	t.Run("a known class with no metric is fine", func(t *testing.T) {
		in := pairs(latencyMetric, four(1), four(1))
		in.Tolerance = map[string]float64{"transactions": 0.2}
		if v := Judge(in); v.Code != Pass {
			t.Errorf("code %d: %q", v.Code, v.CannotJudge)
		}
	})
}

// A tail figure that no answer of its phase lay beyond is the phase's
// slowest answer: a head 30 % worse there is noted, not failed; with
// answers beyond it, the same figures fail.
func TestSlowestAnswerIsNotJudged(t *testing.T) {
	p99 := Metric{ID: "p99.search", Class: Latency, Unit: "ms"}
	for _, tc := range []struct {
		name    string
		count   uint64 // answers of each half of each phase
		slowest bool
		code    Code
	}{
		{"p99 of 80 answers is the slowest", 40, true, Pass},
		{"p99 of 600 answers rests on 6", 300, false, Regression},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := pairs(p99, four(10), four(13))
			for _, side := range [][]Phase{in.Base, in.Head} {
				for i := range side {
					for j := range side[i].Groups {
						side[i].Groups[j].Halves[0].Count, side[i].Groups[j].Halves[1].Count = tc.count, tc.count
					}
				}
			}
			v := Judge(in)
			r := v.Metrics[0]
			if v.Code != tc.code || r.Slowest != tc.slowest || r.Fail == tc.slowest {
				t.Fatalf("code %d slowest %v fail %v (samples %d beyond %d), want code %d slowest %v", v.Code, r.Slowest, r.Fail, r.Samples, r.Beyond, tc.code, tc.slowest)
			}
			if tc.slowest && !containsAll(v.Notes, "p99.search", "slowest answer (80 answers a phase)", "not judged") {
				t.Errorf("no note says the figure is the slowest answer: %q", v.Notes)
			}
		})
	}
}
