package plan

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

const experimentGroups = `
[[group]]
name = "batch"
path = "/publications?n=100"
expect = 200

[[group]]
name = "single"
path = "/publications?n=1"
expect = [200, 404]
`

func TestExperimentTable(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		check      func(t *testing.T, e Experiment)
	}{
		{"closed doubling", `model = "closed"
group = "batch"
control = "single"
max_concurrency = 32
stage = "5s"
success = 99.5
latency = "p90"
objective = "150ms"`, func(t *testing.T, e Experiment) {
			if !reflect.DeepEqual(e.Concurrency, []int{1, 2, 4, 8, 16, 32}) || e.Control != "single" || e.Group != "batch" {
				t.Errorf("levels %v, group %q, control %q", e.Concurrency, e.Group, e.Control)
			}
			if e.Success != 0.995 || e.Percentile != 90 || e.Objective != 150*time.Millisecond || e.Stage != 5*time.Second {
				t.Errorf("success %v, percentile %v, objective %v, stage %v", e.Success, e.Percentile, e.Objective, e.Stage)
			}
		}},
		{"population", `model = "population"
users = 300
think = "30s"
duration = "300s"
hit_status = 200`, func(t *testing.T, e Experiment) {
			if e.Users != 300 || e.Think != 30*time.Second || e.Duration != 300*time.Second || !reflect.DeepEqual(e.HitStatus, []int{200}) {
				t.Errorf("%+v", e)
			}
		}},
		{"population whose users retry", `model = "population"
users = 300
think = "30s"
duration = "300s"
retry_share = 0.1
retry_after = "2s"`, func(t *testing.T, e Experiment) {
			if e.RetryShare != 0.1 || e.RetryAfter != 2*time.Second {
				t.Errorf("retry share %v after %s, want 0.1 after 2s", e.RetryShare, e.RetryAfter)
			}
		}},
		{"population without retries: the default, or switched off", `model = "population"
users = 300
think = "30s"
duration = "300s"
retry_share = 0
retry_after = "2s"`, func(t *testing.T, e Experiment) {
			if e.RetryShare != 0 {
				t.Errorf("retry share %v, want 0", e.RetryShare)
			}
		}},
		{"clients: the ramp-up is the warm-up", `model = "clients"
clients = 20
ramp_up = "30m"
throughput = 20
on_error = "abort"
duration = "5m"`, func(t *testing.T, e Experiment) {
			if e.Clients != 20 || e.Warmup != 30*time.Minute || e.OnError != "abort" || e.Throughput != 20 {
				t.Errorf("%+v", e)
			}
		}},
		{"open phases", `model = "open"
gauges = ["/metrics", "http://127.0.0.1:9187/metrics"]
recovery = "30s"
[[experiment.phase]]
name = "ramp"
from = 100
to = 3000
duration = "5m"
steps = 5
[[experiment.phase]]
name = "plateau"
to = 3000
duration = "10m"
[[experiment.phase]]
name = "spike"
to = 6000
duration = "1m"`, func(t *testing.T, e Experiment) {
			if len(e.Phases) != 3 || e.Phases[0].Kind != "ramp" || e.Phases[0].Steps != 5 || e.Phases[1].From != 3000 || e.Phases[2].To != 6000 {
				t.Errorf("%+v", e.Phases)
			}
			if len(e.Gauges) != 2 || e.Recovery != 30*time.Second {
				t.Errorf("gauges %v, recovery %s", e.Gauges, e.Recovery)
			}
		}},
		{"gauges naming a counter and a histogram", `model = "closed"
max_concurrency = 4
gauges = ["/metrics", {url = "/metrics", metric = "capacity_served_total"}, {url = "http://127.0.0.1:9187/metrics", metric = "http_server_duration_seconds", quantile = 0.99}]`, func(t *testing.T, e Experiment) {
			want := []GaugeSource{{URL: "/metrics"}, {URL: "/metrics", Metric: "capacity_served_total"},
				{URL: "http://127.0.0.1:9187/metrics", Metric: "http_server_duration_seconds", Quantile: 0.99}}
			if !slices.Equal(e.Gauges, want) {
				t.Errorf("gauges %+v, want %+v", e.Gauges, want)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("plan.toml", []byte(experimentGroups+"\n[experiment]\n"+tc.toml+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			if !p.Experiment.Written {
				t.Fatal("[experiment] not marked written")
			}
			tc.check(t, p.Experiment)
		})
	}
}

func TestExperimentHitRules(t *testing.T) {
	for _, tc := range []struct {
		toml          string
		header, field string
		value         any
	}{
		{`hit_header = " X-Cache :  HIT "`, "X-Cache: HIT", "", nil},
		{`hit_header = "X-Cache"`, "X-Cache", "", nil},
		{`hit_field = "cache.hit"`, "", "cache.hit", true},
		{"hit_field = \"cache.state\"\nhit_value = \"fresh\"", "", "cache.state", "fresh"},
		{"hit_field = \"tier\"\nhit_value = 2", "", "tier", 2.0},
	} {
		p, err := Parse("plan.toml", []byte(experimentGroups+"\n[experiment]\nmodel = \"closed\"\nmax_concurrency = 4\n"+tc.toml+"\n"))
		if err != nil {
			t.Errorf("%q: %v", tc.toml, err)
			continue
		}
		e := p.Experiment
		if e.HitHeader != tc.header || e.HitField != tc.field || e.HitValue != tc.value || e.HitStatus != nil {
			t.Errorf("%q: header %q field %q value %#v status %v", tc.toml, e.HitHeader, e.HitField, e.HitValue, e.HitStatus)
		}
	}
}

func TestExperimentRefusals(t *testing.T) {
	// A population experiment's own keys, lines 13 to 16.
	const pop = "model = \"population\"\nusers = 10\nthink = \"1s\"\nduration = \"1m\"\n"
	for _, tc := range []struct{ toml, want string }{
		{`model = "closd"`, `plan.toml:13: model "closd" is not an experiment model; write model = "closed"`},
		{"model = \"closed\"\nusers = 3\nmax_concurrency = 4", `plan.toml:14: unknown key "users" in [experiment] with model = "closed"`},
		{"model = \"closed\"\nconcurrency = [4, 2]", "plan.toml:14: the levels must rise"},
		{"model = \"closed\"\nmax_concurrency = 8\ngroup = \"batches\"", `plan.toml:15: group "batches" names no [[group]] of this plan; write group = "batch"`},
		{"model = \"population\"\nusers = 10\nduration = \"1m\"", "plan.toml:12: a population experiment needs the mean think time"},
		{"model = \"clients\"\nclients = 2\non_error = \"stop\"\nduration = \"1m\"", `plan.toml:15: on_error "stop" is not a choice`},
		{"model = \"population\"\nusers = 1\nthink = \"1s\"\nduration = \"1m\"\ncontrol = \"single\"", "a control ramp repeats a ramp"},
		// One way of naming a hit, refused at the second one's line.
		{"model = \"closed\"\nmax_concurrency = 4\nhit_status = [200]\nhit_header = \"X-Cache: HIT\"", `plan.toml:16: hit_status and hit_header both name what a hit is; keep one`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_header = \"X-Cache\"\nhit_field = \"cache.hit\"", `plan.toml:16: hit_header and hit_field both name what a hit is`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_header = \"X-Cache:\"", `plan.toml:15: hit_header "X-Cache:" has a colon and no value`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_header = \": HIT\"", `plan.toml:15: hit_header ": HIT" names no header`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_field = \"cache..hit\"", `plan.toml:15: hit_field "cache..hit" is not a dotted path`},
		{"model = \"closed\"\nmax_concurrency = 4\ngauges = [{url = \"/metrics\", quantile = 0.99}]", `plan.toml:15: gauges holds`},
		{"model = \"closed\"\nmax_concurrency = 4\ngauges = [{url = \"/metrics\", metric = \"x\", quantile = 99}]", `or {url = "/metrics", metric = "http_server_duration_seconds", quantile = 0.99}`},
		{"model = \"closed\"\nmax_concurrency = 4\ngauges = [{metric = \"x\"}]", `plan.toml:15: gauges holds`},
		{"model = \"closed\"\nmax_concurrency = 4\nrecovery = \"30s\"", `unknown key "recovery" in [experiment] with model = "closed"`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_value = true", `plan.toml:15: hit_value is the value of hit_field`},
		// The users who retry (load.Population): one message each, at its line.
		{pop + "retry_share = 1.5\nretry_after = \"2s\"", `plan.toml:17: retry_share 1.5 is beyond the limit of 1; write retry_share = 0.1 (a tenth of the users)`},
		{pop + "retry_share = 10\nretry_after = \"2s\"", `plan.toml:17: retry_share 10 is beyond the limit of 1`},
		{pop + "retry_share = -0.1\nretry_after = \"2s\"", `plan.toml:17: retry_share is negative (-0.1); write retry_share = 0.1`},
		{pop + "retry_share = \"10%\"\nretry_after = \"2s\"", `plan.toml:17: retry_share must be a number, not a string`},
		{pop + "retry_share = 0.1", `plan.toml:17: retry_share = 0.1 says users retry, and nothing says when; write retry_after = "2s"`},
		{pop + "retry_share = 0.1\nretry_after = \"0s\"", `plan.toml:18: retry_after must be longer than zero; write retry_after = "2s"`},
		{pop + "retry_share = 0.1\nretry_after = \"-1s\"", `plan.toml:18: retry_after is negative (-1s)`},
		{pop + "retry_share = 0.1\nretry_after = 2", `plan.toml:18: retry_after must be a duration string with its unit`},
		{pop + "retry_after = \"2s\"", `plan.toml:17: retry_after says when users retry, and no retry_share says which of them do; write retry_share = 0.1`},
		{"model = \"closed\"\nmax_concurrency = 4\nretry_share = 0.1", `plan.toml:15: retry_share is for the users of model = "population", who retry a slow answer, and model "closed" has none; remove retry_share, or write model = "population" with users and think`},
		{"model = \"clients\"\nclients = 2\nduration = \"1m\"\nretry_after = \"2s\"", `plan.toml:16: retry_after is for the users of model = "population"`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_field = \"cache.hit\"\nhit_value = [1]", `plan.toml:16: hit_value holds [1]`},
		// Counts of things are whole: 2.5 users or 4.5 workers would be
		// truncated to 2 and 4 without a word.
		{"model = \"population\"\nusers = 2.5\nthink = \"1s\"\nduration = \"1m\"", `plan.toml:14: users must be a whole number, not a number; write users = 300`},
		{"model = \"clients\"\nclients = 2.5\nduration = \"1m\"", `plan.toml:14: clients must be a whole number`},
		{"model = \"closed\"\nmax_concurrency = 4.5", `plan.toml:14: max_concurrency must be a whole number`},
		{"model = \"open\"\n[[experiment.phase]]\nname = \"ramp\"\nto = 100\nduration = \"10s\"\nsteps = 2.5", `plan.toml:18: steps must be a whole number`},
		// A stage of no length: the engine refused it, naming no line.
		{"model = \"open\"\n[[experiment.phase]]\nname = \"ramp\"\nto = 100\nduration = \"5ns\"\nsteps = 10", `plan.toml:18: steps = 10 cuts the 5ns phase into stages of no length`},
		// A recovery limit with no spike to hold to it judged nothing.
		{"model = \"open\"\nrates = [10, 20]\nrecovery = \"30s\"", `plan.toml:15: recovery is how soon a spike's p95 must be back, and no [[experiment.phase]] is a spike`},
		{"model = \"open\"\nrecovery = \"30s\"\n[[experiment.phase]]\nname = \"plateau\"\nto = 100\nduration = \"1m\"", `plan.toml:14: recovery is how soon a spike's p95 must be back`},
	} {
		_, err := Parse("plan.toml", []byte(experimentGroups+"\n[experiment]\n"+tc.toml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.toml, err, tc.want)
			continue
		}
		if exit.Code(err) != 2 {
			t.Errorf("%q: exit %d, want 2", tc.toml, exit.Code(err))
		}
		if strings.Contains(tc.want, "retry") && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("%q: %v: a retry key is refused in its own words, not as unknown", tc.toml, err)
		}
	}
}
