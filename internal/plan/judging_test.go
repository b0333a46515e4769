package plan

import (
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
)

// twoGroups is the groups both trees' plans send unless a case says not.
const twoGroups = hello + "\n[[group]]\nname = \"item\"\npath = \"/items/7\"\nexpect = 200\n"

// A pull request cannot loosen its own gate: each judging setting is the
// stricter of the base's and the head's, and every one the head wrote
// differently is listed with both values.
func TestJudgingSettings(t *testing.T) {
	type want struct {
		tolerance  map[string]float64
		thresholds []string // thresholdName: thresholdLimit
		rule       string
		pairs      int
		measure    time.Duration
		answers    string
		ignore     []string
		changes    []Change
	}
	for _, tc := range []struct {
		name, base, head string
		noBase           bool // the base tree has no plan
		want             want
	}{
		{
			name: "the same plan changes nothing",
			base: "[tolerance]\nlatency = 10\n" + twoGroups,
			head: "[tolerance]\nlatency = 10\n" + twoGroups,
			want: want{tolerance: map[string]float64{"latency": 0.10}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second},
		},
		{
			name: "a loosened latency and a dropped threshold are the base's",
			base: "[tolerance]\nlatency = 10\n\n[[threshold]]\ngroup = \"hello\"\nmetric = \"p99\"\nbelow = \"20ms\"\n\n" + twoGroups,
			head: "[tolerance]\nlatency = 1000\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{"latency": 0.10}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				thresholds: []string{"[[threshold]] p99 of group hello: below 20ms"},
				changes: []Change{
					{Setting: "[tolerance] latency", Base: "10 %", Head: "1000 %", Judged: "10 %"},
					{Setting: "[[threshold]] p99 of group hello", Base: "below 20ms", Head: absent, Judged: "below 20ms"},
				},
			},
		},
		{
			name: "a tightened tolerance is the head's",
			base: "[tolerance]\nlatency = 10\n" + twoGroups,
			head: "[tolerance]\nlatency = 3\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{"latency": 0.03}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				changes: []Change{{Setting: "[tolerance] latency", Base: "10 %", Head: "3 %", Judged: "3 %"}},
			},
		},
		{
			name: "a metric key cannot escape its class in the base",
			base: "[tolerance]\nlatency = 10\n" + twoGroups,
			head: "[tolerance]\nlatency = 10\n\"p99.hello\" = 500\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{"latency": 0.10, "p99.hello": 0.10}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				changes: []Change{{Setting: `[tolerance] "p99.hello"`, Base: "10 % (its class latency)", Head: "500 %", Judged: "10 % (its class latency)"}},
			},
		},
		{
			name: "a key the base leaves to the default is judged at the default",
			base: twoGroups,
			head: "[tolerance]\ncpu = 50\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{"cpu": 0.05}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				changes: []Change{{Setting: "[tolerance] cpu", Base: "5 % (the default)", Head: "50 %", Judged: "5 % (the default)"}},
			},
		},
		{
			name: "the rule is the base's, and no class default the looser",
			base: twoGroups,
			head: "[judge]\nrule = \"seed\"\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{"latency": 0.05, "cpu": 0.05}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				changes: []Change{
					{Setting: "[judge] rule", Base: judge.RulePaired, Head: judge.RuleMedians, Judged: judge.RulePaired},
					{Setting: "[tolerance] cpu", Base: "5 % (the default)", Head: "25 % (the default)", Judged: "5 % (the default)"},
					{Setting: "[tolerance] latency", Base: "5 % (the default)", Head: "25 % (the default)", Judged: "5 % (the default)"},
				},
			},
		},
		{
			name: "the base's pairs and measure are a floor",
			base: "[ab]\npairs = 6\nmeasure = \"8s\"\n" + twoGroups,
			head: "[ab]\npairs = 2\nmeasure = \"20s\"\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 6, measure: 20 * time.Second,
				changes: []Change{
					{Setting: "[ab] pairs", Base: "6", Head: "2", Judged: "6"},
					{Setting: "[ab] measure", Base: "8s", Head: "20s", Judged: "20s"},
				},
			},
		},
		{
			name: "a threshold both write is judged at the stricter limit",
			base: "[[threshold]]\nmetric = \"success\"\nmin = 99\n\n[[threshold]]\ngroup = \"item\"\nmetric = \"p90\"\nbelow = \"50ms\"\n\n" + twoGroups,
			head: "[[threshold]]\nmetric = \"success\"\nmin = 90\n\n[[threshold]]\ngroup = \"item\"\nmetric = \"p90\"\nbelow = \"30ms\"\n\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				thresholds: []string{"[[threshold]] success of all groups: min 99 %", "[[threshold]] p90 of group item: below 30ms"},
				changes: []Change{
					{Setting: "[[threshold]] success of all groups", Base: "min 99 %", Head: "min 90 %", Judged: "min 99 %"},
					{Setting: "[[threshold]] p90 of group item", Base: "below 50ms", Head: "below 30ms", Judged: "below 30ms"},
				},
			},
		},
		{
			name: "a group only the head has keeps the head's settings; one the head dropped cannot be judged",
			base: "[tolerance]\n\"p99.item\" = 10\n\n[[threshold]]\ngroup = \"item\"\nmetric = \"p99\"\nbelow = \"20ms\"\n\n" + twoGroups,
			head: "[tolerance]\n\"p99.fresh\" = 40\n\n[[threshold]]\ngroup = \"fresh\"\nmetric = \"p99\"\nbelow = \"90ms\"\n\n" + hello + "\n[[group]]\nname = \"fresh\"\npath = \"/fresh\"\nexpect = 200\n",
			want: want{
				tolerance: map[string]float64{"p99.fresh": 0.40}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				thresholds: []string{"[[threshold]] p99 of group fresh: below 90ms"},
				changes: []Change{
					{Setting: "[[threshold]] p99 of group item", Base: "below 20ms", Head: "absent (the head sends no group item)", Judged: absent},
				},
			},
		},
		{
			name: "a class the head loosens stays loose on its new group alone",
			base: "[tolerance]\nlatency = 10\n" + hello,
			head: "[tolerance]\nlatency = 50\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{"latency": 0.10, "p50.item": 0.50, "p95.item": 0.50, "p99.item": 0.50}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				changes: []Change{{Setting: "[tolerance] latency", Base: "10 %", Head: "50 %", Judged: "10 %"}},
			},
		},
		{
			name: "a head that stops comparing answers is compared by the base's",
			base: "[ab]\nanswers = \"same\"\nignore = [\"id\"]\n" + twoGroups,
			head: twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersSame, ignore: []string{"id"},
				changes: []Change{
					{Setting: "[ab] answers", Base: AnswersSame, Head: absent, Judged: AnswersSame},
					{Setting: "[ab] ignore", Base: "id", Head: absent, Judged: "id"},
				},
			},
		},
		{
			name: "a head that makes a difference a note still fails on one",
			base: "[ab]\nanswers = \"same\"\n" + twoGroups,
			head: "[ab]\nanswers = \"warn\"\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersSame,
				changes: []Change{{Setting: "[ab] answers", Base: AnswersSame, Head: AnswersWarn, Judged: AnswersSame}},
			},
		},
		{
			name: "a field only the head ignores is compared",
			base: "[ab]\nanswers = \"same\"\nignore = [\"id\"]\n" + twoGroups,
			head: "[ab]\nanswers = \"same\"\nignore = [\"id\", \"items.0.total\"]\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersSame, ignore: []string{"id"},
				changes: []Change{{Setting: "[ab] ignore", Base: "id", Head: "id, items.0.total", Judged: "id"}},
			},
		},
		{
			name: "a field the head stops ignoring is compared",
			base: "[ab]\nanswers = \"warn\"\nignore = [\"id\", \"created_at\"]\n" + twoGroups,
			head: "[ab]\nanswers = \"warn\"\nignore = [\"created_at\"]\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersWarn, ignore: []string{"created_at"},
				changes: []Change{{Setting: "[ab] ignore", Base: "id, created_at", Head: "created_at", Judged: "created_at"}},
			},
		},
		{
			name: "the same fields in another order are no change",
			base: "[ab]\nanswers = \"same\"\nignore = [\"id\", \"created_at\"]\n" + twoGroups,
			head: "[ab]\nanswers = \"same\"\nignore = [\"created_at\", \"id\"]\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersSame, ignore: []string{"id", "created_at"},
			},
		},
		{
			name: "a head that starts comparing answers is compared its way",
			base: twoGroups,
			head: "[ab]\nanswers = \"same\"\nignore = [\"id\"]\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersSame, ignore: []string{"id"},
				changes: []Change{
					{Setting: "[ab] answers", Base: absent, Head: AnswersSame, Judged: AnswersSame},
					{Setting: "[ab] ignore", Base: absent, Head: "id", Judged: "id"},
				},
			},
		},
		{
			name: "a head stricter than a base that notes differences is judged with its own fields",
			base: "[ab]\nanswers = \"warn\"\nignore = [\"id\"]\n" + twoGroups,
			head: "[ab]\nanswers = \"same\"\nignore = [\"id\", \"created_at\"]\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersSame, ignore: []string{"id", "created_at"},
				changes: []Change{
					{Setting: "[ab] answers", Base: AnswersWarn, Head: AnswersSame, Judged: AnswersSame},
					{Setting: "[ab] ignore", Base: "id", Head: "id, created_at", Judged: "id, created_at"},
				},
			},
		},
		{
			name:   "without a base plan the head's answers settings judge",
			noBase: true,
			head:   "[ab]\nanswers = \"warn\"\nignore = [\"id\"]\n" + twoGroups,
			want: want{
				tolerance: map[string]float64{}, rule: judge.RulePaired, pairs: 8, measure: 10 * time.Second,
				answers: AnswersWarn, ignore: []string{"id"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var base *Plan
			if !tc.noBase {
				var err error
				if base, err = Parse("base/perf/plan.toml", []byte(tc.base)); err != nil {
					t.Fatal(err)
				}
			}
			head, err := Parse("perf/plan.toml", []byte(tc.head))
			if err != nil {
				t.Fatal(err)
			}
			got, changes := JudgingSettings(base, head)
			if !reflect.DeepEqual(got.Tolerance, tc.want.tolerance) {
				t.Errorf("tolerance %v, want %v", got.Tolerance, tc.want.tolerance)
			}
			var ths []string
			for _, th := range got.Thresholds {
				ths = append(ths, thresholdName(th)+": "+thresholdLimit(th))
			}
			if !reflect.DeepEqual(ths, tc.want.thresholds) {
				t.Errorf("thresholds %q, want %q", ths, tc.want.thresholds)
			}
			if got.Rule != tc.want.rule || got.AB.Pairs != tc.want.pairs || got.AB.Measure != tc.want.measure {
				t.Errorf("rule %s, pairs %d, measure %s; want %s, %d, %s", got.Rule, got.AB.Pairs, got.AB.Measure, tc.want.rule, tc.want.pairs, tc.want.measure)
			}
			if got.AB.Answers != tc.want.answers || !reflect.DeepEqual(got.AB.Ignore, tc.want.ignore) {
				t.Errorf("answers %q ignoring %q, want %q ignoring %q", got.AB.Answers, got.AB.Ignore, tc.want.answers, tc.want.ignore)
			}
			if !reflect.DeepEqual(changes, tc.want.changes) {
				t.Errorf("changes\n%+v\nwant\n%+v", changes, tc.want.changes)
			}
			// What is sent stays the head's.
			if got.Path != head.Path || !reflect.DeepEqual(got.Groups, head.Groups) {
				t.Errorf("the judged plan sends %v from %s, want the head's %v", got.Groups, got.Path, head.Groups)
			}
		})
	}
}

// The judged plan is a copy: judging leaves both trees' plans as parsed.
func TestJudgingSettingsLeavesBothPlans(t *testing.T) {
	base, err := Parse("base.toml", []byte("[tolerance]\nlatency = 10\n\n[[threshold]]\nmetric = \"p99\"\nbelow = \"20ms\"\n\n"+hello))
	if err != nil {
		t.Fatal(err)
	}
	head, err := Parse("head.toml", []byte("[ab]\npairs = 2\n\n[tolerance]\nlatency = 1000\n\n"+hello))
	if err != nil {
		t.Fatal(err)
	}
	JudgingSettings(base, head)
	if head.Tolerance["latency"] != 10 || len(head.Thresholds) != 0 || head.AB.Pairs != 2 {
		t.Errorf("the head's plan changed: %v %v %d", head.Tolerance, head.Thresholds, head.AB.Pairs)
	}
	if base.Tolerance["latency"] != 0.10 || len(base.Thresholds) != 1 {
		t.Errorf("the base's plan changed: %v %v", base.Tolerance, base.Thresholds)
	}
	got, changes := JudgingSettings(nil, head)
	if changes != nil || got.Tolerance["latency"] != 10 {
		t.Errorf("without a base plan: %v %v, want the head's settings and no change", got.Tolerance, changes)
	}
}

// Counters and store writes the base declares stay while the head sends
// their group; a counter both declare is judged at the lower limit.
func TestJudgingCountersAndStoreWrites(t *testing.T) {
	groups := hello + "\n[[group]]\nname = \"create\"\nmethod = \"POST\"\npath = \"/items\"\nexpect = 201\n"
	base, err := Parse("base.toml", []byte(`[[store_writes]]
group = "create"
table = "app.items"

[[counter]]
name = "exchanges"
group = "hello"
url = "/calls"
max_per_request = 5

[[counter]]
name = "rows"
group = "create"
sql = "SELECT count(*) FROM items"
max_per_request = 100
`+groups))
	if err != nil {
		t.Fatal(err)
	}
	head, err := Parse("head.toml", []byte(`[[counter]]
name = "exchanges"
group = "hello"
url = "/calls"
requests = 500
max_per_request = 50
`+groups))
	if err != nil {
		t.Fatal(err)
	}
	got, changes := JudgingSettings(base, head)
	if len(got.Counters) != 2 || got.Counters[0].MaxPerRequest != 0.05 || got.Counters[0].Requests != 500 || got.Counters[1].Name != "rows" {
		t.Errorf("counters %+v, want exchanges at 5 %% over 500 requests, then rows", got.Counters)
	}
	if len(got.StoreWrites) != 1 || got.StoreWrites[0].Table != "app.items" {
		t.Errorf("store writes %+v, want the base's app.items", got.StoreWrites)
	}
	want := []Change{
		{Setting: "[[counter]] exchanges max_per_request", Base: "5 %", Head: "50 %", Judged: "5 %"},
		{Setting: "[[counter]] exchanges requests", Base: "200", Head: "500", Judged: "500"},
		{Setting: "[[counter]] rows", Base: "max_per_request 100 %", Head: absent, Judged: "max_per_request 100 %"},
		{Setting: "[[store_writes]] app.items of group create", Base: "written", Head: absent, Judged: "written"},
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes\n%+v\nwant\n%+v", changes, want)
	}
}

// A control kind the base declares is the base's; one only the head
// declares is the head's.
func TestJudgingControls(t *testing.T) {
	idle := Control{Kind: ControlIdle, PlanFile: "perf/busy-loop.toml"}
	variant := Control{Kind: ControlVariant, Counter: "exchanges", Overrides: []string{"CACHE=false"}}
	weak := Control{Kind: ControlVariant, Counter: "exchanges", Overrides: []string{"CACHE=true"}}
	for _, tc := range []struct {
		name       string
		base, head Controls
		want       Controls
		changes    []Change
	}{
		{"same", Controls{idle}, Controls{idle}, Controls{idle}, nil},
		{"removed by the head", Controls{idle, variant}, Controls{variant}, Controls{idle, variant},
			[]Change{{Setting: "[[control]] idle", Base: "plan = perf/busy-loop.toml", Head: absent, Judged: "plan = perf/busy-loop.toml"}}},
		{"weakened by the head", Controls{variant}, Controls{weak}, Controls{variant},
			[]Change{{Setting: "[[control]] variant", Base: "counter = exchanges, overrides = CACHE=false", Head: "counter = exchanges, overrides = CACHE=true", Judged: "counter = exchanges, overrides = CACHE=false"}}},
		{"added by the head", nil, Controls{idle}, Controls{idle}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, changes := JudgingControls(tc.base, tc.head)
			if !reflect.DeepEqual(got, tc.want) || !reflect.DeepEqual(changes, tc.changes) {
				t.Errorf("got %+v %+v, want %+v %+v", got, changes, tc.want, tc.changes)
			}
		})
	}
}
