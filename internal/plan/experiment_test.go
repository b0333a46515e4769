package plan

import (
	"reflect"
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
			if len(e.Gauges) != 2 {
				t.Errorf("gauges %v", e.Gauges)
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

func TestExperimentRefusals(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{`model = "closd"`, `plan.toml:13: model "closd" is not an experiment model; write model = "closed"`},
		{"model = \"closed\"\nusers = 3\nmax_concurrency = 4", `plan.toml:14: unknown key "users" in [experiment] with model = "closed"`},
		{"model = \"closed\"\nconcurrency = [4, 2]", "plan.toml:14: the levels must rise"},
		{"model = \"closed\"\nmax_concurrency = 8\ngroup = \"batches\"", `plan.toml:15: group "batches" names no [[group]] of this plan; write group = "batch"`},
		{"model = \"population\"\nusers = 10\nduration = \"1m\"", "plan.toml:12: a population experiment needs the mean think time"},
		{"model = \"clients\"\nclients = 2\non_error = \"stop\"\nduration = \"1m\"", `plan.toml:15: on_error "stop" is not a choice`},
		{"model = \"population\"\nusers = 1\nthink = \"1s\"\nduration = \"1m\"\ncontrol = \"single\"", "a control ramp repeats a ramp"},
		// A header or a JSON field is refused at its own line with why, not
		// as a typo of hit_status.
		{"model = \"closed\"\nmax_concurrency = 4\nhit_header = \"X-Cache: HIT\"", `plan.toml:15: hit_header is not read: perfgate keeps each answer's status, never its headers or body, so a hit can only be a status; write hit_status = [200]`},
		{"model = \"closed\"\nmax_concurrency = 4\nhit_field = \"cache.hit\"", `plan.toml:15: hit_field is not read`},
	} {
		_, err := Parse("plan.toml", []byte(experimentGroups+"\n[experiment]\n"+tc.toml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s", tc.toml, err, tc.want)
			continue
		}
		if exit.Code(err) != 2 {
			t.Errorf("%q: exit %d, want 2", tc.toml, exit.Code(err))
		}
	}
}
