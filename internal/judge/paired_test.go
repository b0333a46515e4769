package judge

import (
	"math"
	"strings"
	"testing"
)

// pairedFloor is the paired rule's floor for lower-is-better ratios,
// computed here from the formula in docs/judge.md with the t quantile
// written out, so the test does not reuse the code it checks.
func pairedFloor(t float64, ratios ...float64) float64 {
	var ls []float64
	mean := 0.0
	for _, r := range ratios {
		ls = append(ls, math.Log(r))
		mean += math.Log(r)
	}
	mean /= float64(len(ls))
	ss := 0.0
	for _, l := range ls {
		ss += (l - mean) * (l - mean)
	}
	sd := math.Sqrt(ss / float64(len(ls)-1))
	return math.Expm1(t * sd / math.Sqrt(float64(len(ls))))
}

func times(base []float64, ratios ...float64) []float64 {
	out := make([]float64, len(base))
	for i := range base {
		out[i] = base[i] * ratios[i%len(ratios)]
	}
	return out
}

func TestPairedBoundaries(t *testing.T) {
	const t3, t7 = 4.541, 2.998 // Student's t, 99 % one-sided, 3 and 7 degrees of freedom
	eight := []float64{100, 100, 100, 100, 100, 100, 100, 100}
	drift := []float64{100, 130, 80, 110} // the runner's speed, shared by both arms of a pair
	tests := []struct {
		name      string
		in        Input
		tol       float64 // latency tolerance; 0 keeps the default
		code      Code
		breach    bool
		breached  int
		threshold float64
		says      string // in the failures, or in the notes when the code is not 1
	}{
		{name: "A/A passes", in: pairs(latencyMetric, four(100), four(100)), code: Pass, threshold: 0.05},
		{name: "every pair exactly at the default 5 % is no breach", in: pairs(latencyMetric, four(100), four(105)), code: Pass, threshold: 0.05},
		{name: "every pair just over the default 5 % fails", in: pairs(latencyMetric, four(100), four(105.01)), code: Regression, breach: true, breached: 4, threshold: 0.05, says: "p50.search: the head is worse by 5.01 %"},
		{name: "every pair exactly at the tolerance is no breach", in: pairs(latencyMetric, four(100), four(125)), tol: 0.25, code: Pass, threshold: 0.25},
		{name: "every pair just over the tolerance fails", in: pairs(latencyMetric, four(100), four(125.01)), tol: 0.25, code: Regression, breach: true, breached: 4, threshold: 0.25, says: "p50.search: the head is worse by 25.01 %"},
		// The medians rule's floor is each arm's own spread, 23.8 % here, all of it
		// drift both arms shared; the paired ratios are all 1.2.
		{name: "shared drift stays out of the floor", in: pairs(latencyMetric, drift, times(drift, 1.2)), tol: 0.10, code: Regression, breach: true, breached: 4, threshold: 0.10, says: "worse by 20 %"},
		{name: "pairs that disagree raise the floor", in: pairs(latencyMetric, four(100), times(four(100), 1.3, 1.3, 1.3, 0.9)), code: Pass, breached: 3, threshold: pairedFloor(t3, 1.3, 1.3, 1.3, 0.9)},
		{name: "2 of 4 pairs breaching is not most", in: pairs(latencyMetric, four(100), times(four(100), 1.5, 1.5, 1.24, 1.24)), tol: 0.25, code: Pass, breach: true, breached: 2, threshold: pairedFloor(t3, 1.5, 1.5, 1.24, 1.24), says: "not most"},
		{name: "3 of 4 pairs breaching fails", in: pairs(latencyMetric, four(100), times(four(100), 1.5, 1.5, 1.5, 1.24)), tol: 0.25, code: Regression, breach: true, breached: 3, threshold: 0.25},
		// The same scatter of ratios: 4 pairs cannot tell 10.9 % from noise,
		// 8 pairs can. The medians rule's floor grows with pairs; this one shrinks.
		{name: "4 pairs of a scattered 10 % slowdown pass", in: pairs(latencyMetric, four(100), times(four(100), 1.16, 1.06)), tol: 0.05, code: Pass, breached: 4, threshold: pairedFloor(t3, 1.16, 1.06, 1.16, 1.06)},
		// With 8 pairs the sign-flip bound applies too, and is the higher here:
		// of the 256 patterns of signs the third largest mean flips one 1.06.
		{name: "8 pairs of the same slowdown fail", in: pairs(latencyMetric, eight, times(eight, 1.16, 1.06)), tol: 0.05, code: Regression, breach: true, breached: 8, threshold: math.Expm1((4*math.Log(1.16) + 2*math.Log(1.06)) / 8)},
		{name: "one pair has no floor: the tolerance alone decides", in: pairs(latencyMetric, []float64{100}, []float64{130}), tol: 0.25, code: Regression, breach: true, breached: 1, threshold: 0.25, says: "worse by 30 %"},
		{name: "zero base, zero head is equal", in: pairs(txMetric, four(0), four(0)), code: Pass, threshold: 0.10},
		{name: "zero base, any rise breaches", in: pairs(txMetric, four(0), four(0.01)), code: Regression, breach: true, breached: 4, threshold: 0.10, says: "rose from 0 to 0.01 tx"},
		{name: "throughput 20 % lower is at the tolerance", in: pairs(throughputMetric, four(20), four(16)), code: Pass, threshold: 0.20},
		{name: "throughput over 20 % lower fails", in: pairs(throughputMetric, four(20), four(15.9)), code: Regression, breach: true, breached: 4, threshold: 0.20, says: "throughput: the head is lower by 20.5 %"},
		{name: "latency better is never worse", in: pairs(latencyMetric, four(100), four(10)), code: Pass, threshold: 0.05},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tol > 0 {
				tc.in.Tolerance = map[string]float64{"latency": tc.tol}
			}
			v := Judge(tc.in)
			if v.Code != tc.code || v.Rule != RulePaired {
				t.Fatalf("code %v rule %q, want %v by the paired rule; verdict %+v", v.Code, v.Rule, tc.code, v)
			}
			r := v.Metrics[0]
			if r.Breach != tc.breach || r.PairsBreached != tc.breached {
				t.Errorf("breach %v in %d pairs, want %v in %d", r.Breach, r.PairsBreached, tc.breach, tc.breached)
			}
			if math.Abs(r.Threshold-tc.threshold) > 1e-3 {
				t.Errorf("threshold %v, want %v (floor %v)", r.Threshold, tc.threshold, r.Floor)
			}
			if r.Fail != (tc.code == Regression) {
				t.Errorf("fail %v with code %v", r.Fail, v.Code)
			}
			if tc.says != "" {
				lines := v.Failures
				if tc.code != Regression {
					lines = v.Notes
				}
				if !containsAll(lines, tc.says) {
					t.Errorf("lines %q, want one holding %q", lines, tc.says)
				}
			}
		})
	}
}

// The medians rule on the shared-drift input passes what the paired rule
// fails: the reason the paired rule is the default. Its former name, which
// plans and reports written before it had its public one carry, judges the
// same.
func TestMediansRuleKeepsItsReading(t *testing.T) {
	drift := []float64{100, 130, 80, 110}
	in := pairs(latencyMetric, drift, times(drift, 1.2))
	in.Tolerance = map[string]float64{"latency": 0.10}
	for _, name := range []string{RuleMedians, RuleMediansFormerName} {
		in.Rule = name
		v := Judge(in)
		if v.Code != Pass || v.Rule != RuleMedians || v.Metrics[0].Rule != RuleMedians {
			t.Fatalf("rule %q: code %v rule %q, want a pass by the medians rule", name, v.Code, v.Rule)
		}
		if f := v.Metrics[0].Floor; math.Abs(f-25.0/105) > 1e-12 {
			t.Errorf("rule %q: floor %v, want the arms' spread 25/105", name, f)
		}
	}
	in.Rule = "median"
	if v := Judge(in); v.Code != CannotJudge || !containsAll(v.CannotJudge, `rule "median"`) {
		t.Errorf("unknown rule: code %v %q, want cannot judge naming it", v.Code, v.CannotJudge)
	}
}

func TestTQuantile(t *testing.T) {
	for _, tc := range []struct {
		df   int
		want float64
	}{{1, 31.821}, {3, 4.541}, {7, 2.998}, {30, 2.457}, {31, 2.453}, {60, 2.390}, {120, 2.358}, {1000, 2.330}} {
		if got := tQuantile(tc.df); math.Abs(got-tc.want) > 0.002 {
			t.Errorf("t(%d) = %.4f, want %.3f", tc.df, got, tc.want)
		}
	}
}

// Issue 10: a base that answers 404 to every group compared no latency,
// and a slow head passed. Now the gate cannot judge, naming each group.
func TestNoGroupComparedCannotJudge(t *testing.T) {
	in := full()
	// The run leaves out latency metrics of groups an arm never answered
	// as planned; here the base answered nothing as planned.
	in.Metrics = []Metric{in.Metrics[0], in.Metrics[3], in.Metrics[4]}
	for i := range in.Base {
		for j := range in.Base[i].Groups {
			g := &in.Base[i].Groups[j]
			g.WrongStatus = map[int]uint64{404: g.Requests}
			g.Halves = [2]Half{}
		}
	}
	v := Judge(in)
	if v.Code != CannotJudge {
		t.Fatalf("code %v, want cannot judge; %+v", v.Code, v)
	}
	if !containsAll(v.CannotJudge, "no request group's latency could be compared", "group search not compared: base had no answer as the plan says in 4 of 4 phases (answered 404 x2400)", "group item") {
		t.Errorf("cannot judge %q", v.CannotJudge)
	}
	if len(v.LeftOut) != 2 {
		t.Errorf("left out %q, want both groups", v.LeftOut)
	}

	// One group compared: judged as before, the other listed as left out.
	in = full()
	for i := range in.Base {
		g := &in.Base[i].Groups[1]
		g.Failed = map[string]uint64{"tls": g.Requests}
		g.Halves = [2]Half{}
	}
	v = Judge(in)
	if v.Code != Pass || len(v.LeftOut) != 1 || !strings.Contains(v.LeftOut[0], "group item not compared: base had no answer as the plan says in 4 of 4 phases (failed tls x2400)") {
		t.Errorf("code %v left out %q, want a pass listing group item", v.Code, v.LeftOut)
	}
}

func TestThresholdsJudged(t *testing.T) {
	tests := []struct {
		name string
		th   Threshold
		fail bool
		says string
	}{
		{"p90 under its limit", Threshold{Line: 40, Metric: "p90", Side: "client", BelowMS: 150, Value: 149.9, Samples: 100}, false, "p90 of all groups is 149.9 ms over 100 answers, must be under 150 ms"},
		{"p90 at its limit fails", Threshold{Line: 40, Metric: "p90", Group: "search", Side: "client", BelowMS: 150, Value: 150, Samples: 100}, true, "threshold (plan line 40): p90 of group search is 150 ms"},
		{"a percentile with no answer fails", Threshold{Metric: "p99", Side: "server", BelowMS: 20}, true, "p99 of all groups (server side) has no answer as planned"},
		{"success at its minimum", Threshold{Metric: "success", Side: "client", Min: 0.99, Value: 0.99, Samples: 1000}, false, "99 %"},
		{"success under it fails", Threshold{Metric: "success", Group: "item", Side: "client", Min: 0.99, Value: 0.985, Samples: 1000}, true, "success of group item (answered as planned) is 98.5 % over 1000 requests, must be at least 99 %"},
		{"under reaches its share", Threshold{Metric: "under", Side: "client", BelowMS: 50, Min: 0.9, Value: 0.95, Samples: 10}, false, "the share of all groups answered under 50 ms is 95 %"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := JudgeThreshold(tc.th)
			if r.Fail != tc.fail || !strings.Contains(r.Says, tc.says) {
				t.Errorf("fail %v says %q, want %v holding %q", r.Fail, r.Says, tc.fail, tc.says)
			}
		})
	}
	in := full()
	in.Thresholds = []Threshold{tests[1].th}
	if v := Judge(in); v.Code != Regression || !containsAll(v.Failures, "head: threshold (plan line 40)") || len(v.Thresholds) != 1 {
		t.Errorf("a breached threshold: code %v failures %q", v.Code, v.Failures)
	}
}

// Issue 13's case: a tail 12 % slower in 7 of 8 pairs on a runner whose
// speed wandered by a fifth, at a 5 % tolerance. The medians rule's floor became
// the arms' own spread and the gate passed; the paired rule fails it.
func TestIssue13TailSlowdown(t *testing.T) {
	drift := []float64{100, 118, 84, 107, 93, 121, 88, 110}
	ratios := []float64{1.12, 1.10, 1.14, 1.11, 1.13, 1.12, 1.00, 1.12}
	head := make([]float64, len(drift))
	for i := range drift {
		head[i] = drift[i] * ratios[i]
	}
	m := Metric{ID: "p99.search", Class: Latency, Unit: "ms"}
	for _, tc := range []struct {
		rule string
		code Code
	}{{RuleMedians, Pass}, {RulePaired, Regression}} {
		in := pairs(m, drift, head)
		in.Rule, in.Tolerance = tc.rule, map[string]float64{"latency": 0.05}
		v := Judge(in)
		r := v.Metrics[0]
		if v.Code != tc.code {
			t.Errorf("%s rule: code %v (worse %.3f, threshold %.3f, %d of 8 pairs), want %v", tc.rule, v.Code, r.Worse, r.Threshold, r.PairsBreached, tc.code)
		}
		if r.CI.Lo < 1.05 {
			t.Errorf("the interval [%.3f, %.3f] should lie beyond the tolerance, as in the issue", r.CI.Lo, r.CI.Hi)
		}
	}
}
