package cli

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/check"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/loadrun"
	"github.com/perfgate/perfgate/internal/plan"
)

// TestOptionsFromArgv fills each command's Options from a command line
// without running the work: the defaults, every flag, and the refusals a
// command line earns before anything starts.
func TestOptionsFromArgv(t *testing.T) {
	parse := map[string]func(*IO, []string) (any, error){
		"check":   func(s *IO, a []string) (any, error) { return checkOptions(s, a) },
		"prepare": func(s *IO, a []string) (any, error) { o, err := prepareOptions(s, a); o.Log = nil; return o, err },
		"load": func(s *IO, a []string) (any, error) {
			o, err := loadOptions(s, a)
			o.Getenv, o.Resolved, o.Stdout = nil, nil, nil
			return o, err
		},
		"experiment": func(s *IO, a []string) (any, error) {
			o, err := experimentOptions(s, a)
			o.Getenv, o.Resolved, o.Stdout = nil, nil, nil
			return o, err
		},
	}
	tests := []struct {
		name, cmd string
		argv      []string
		want      any
		refused   bool
	}{
		{name: "check defaults", cmd: "check", want: check.Options{Repo: "."}},
		{name: "check flags", cmd: "check", argv: []string{"--repo", "r", "--base", "v1", "--base-ref", "origin/main", "--tag", "v2"},
			want: check.Options{Repo: "r", Base: "v1", BaseRef: "origin/main", Tag: "v2"}},
		{name: "check refuses an argument", cmd: "check", argv: []string{"r"}, refused: true},
		{name: "prepare with a local push", cmd: "prepare", argv: []string{"--event", "push", "--before", "abc", "--out", "o"},
			want: gate.PrepareOptions{Repo: ".", Out: "o", Event: &event.Event{Name: event.Push, Before: "abc"}}},
		{name: "prepare refuses event flags without --event", cmd: "prepare", argv: []string{"--before", "abc"}, refused: true},
		{name: "load defaults", cmd: "load", want: loadrun.Options{Plan: "perf/plan.toml", Seed: 1}},
		{name: "load flags", cmd: "load", argv: []string{"--target", "http://127.0.0.1:1", "--rate", "5", "--duration", "2s", "--warmup", "0s", "--var", "a=1", "--var", "b=@f", "--seed", "3"},
			want: loadrun.Options{Plan: "perf/plan.toml", Target: "http://127.0.0.1:1", Rate: 5, Duration: 2 * time.Second, WarmupSet: true, Seed: 3, Vars: []string{"a=1", "b=@f"}}},
		{name: "load refuses a bad flag", cmd: "load", argv: []string{"--rate", "fast"}, refused: true},
		{name: "experiment flags", cmd: "experiment", argv: []string{"--target", "http://127.0.0.1:1", "--shard", "/4", "--start", "2026-12-01T10:00:00Z", "--on-error", "abort", "--pid", "7", "--html", "r.html"},
			want: experiment.PlanOptions{Plan: "perf/plan.toml", Target: "http://127.0.0.1:1", Shard: "/4", Start: "2026-12-01T10:00:00Z", OnError: "abort", PID: 7, HTML: "r.html", Seed: 1, Repeat: 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			got, err := parse[tc.cmd](&IO{Out: &bytes.Buffer{}, Err: &errb}, tc.argv)
			if tc.refused {
				if exit.Code(err) != exit.CannotJudge {
					t.Fatalf("err %v, want a refusal (exit 2)", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("options\n%+v\nwant\n%+v", got, tc.want)
			}
		})
	}
}

// TestCommandTable holds the table whole: one entry a name, each with its
// work and, when listed, its summary.
func TestCommandTable(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range table() {
		if seen[c.Name] {
			t.Errorf("command %q twice in the table", c.Name)
		}
		seen[c.Name] = true
		if c.Run == nil || c.Summary == "" {
			t.Errorf("command %q lacks its work or its summary", c.Name)
		}
	}
	out, _, code := runCommand(t, nil, "help")
	if code != exit.Pass || !bytes.Contains([]byte(out), []byte("services plan")) || bytes.Contains([]byte(out), []byte("demo-service")) {
		t.Errorf("help (exit %d) lists:\n%s", code, out)
	}
}

// TestErrorsPrintedOnce: a refusal is one line under one prefix, the
// command's own name when the message carries it.
func TestErrorsPrintedOnce(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"load", "--rate", "fast"}, "perfgate load: invalid value \"fast\" for flag -rate: parse error (see `perfgate load -h`)\n"},
		{[]string{"experiment"}, "perfgate experiment: --target is missing; write --target http://127.0.0.1:8080\n"},
		{[]string{"compare"}, "perfgate: compare: give the report to judge: perfgate compare --report target/perf/latest.json\n"},
		{[]string{"nosuch"}, "perfgate: unknown command \"nosuch\": run `perfgate help` for the list\n"},
	} {
		_, stderr, code := runCommand(t, nil, tc.argv...)
		if code != exit.CannotJudge || stderr != tc.want {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.argv, code, stderr, tc.want)
		}
	}
}

// TestRunHelpNamesTheDefaults: the profile flags' help gives the [ab]
// defaults of plan.Default, not numbers of its own.
func TestRunHelpNamesTheDefaults(t *testing.T) {
	d := plan.Default().AB
	_, stderr, code := runCommand(t, nil, "run", "--help")
	for _, want := range []string{
		fmt.Sprintf("the plan's, %d unless it sets pairs", d.Pairs),
		fmt.Sprintf("the plan's, %g/s unless it sets rate", d.Rate),
		fmt.Sprintf("the plan's, %gs unless it sets measure", d.Measure.Seconds()),
		fmt.Sprintf("the plan's, %gs unless it sets idle", d.Idle.Seconds()),
	} {
		if code != exit.Pass || !strings.Contains(stderr, want) {
			t.Errorf("run --help (exit %d) lacks %q:\n%s", code, want, stderr)
		}
	}
}
