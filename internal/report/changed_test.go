package report_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
)

// The summary, the terminal and the JSON report name every judging setting
// the head changed with both values, and the note when the base had no
// plan; a run judged with one plan says nothing of it.
func TestSettingsTheHeadChanged(t *testing.T) {
	loosened := &report.Judging{BasePlan: "perf/plan.toml", Changed: []judge.SettingChange{
		{Setting: "[tolerance] latency", Base: "10 %", Head: "1000 %", Judged: "10 %"},
		{Setting: "[[threshold]] p99 of group hello", Base: "below 20ms", Head: "absent", Judged: "below 20ms"},
	}}
	noBase := &report.Judging{Note: "The base has no plan at perf/plan.toml: the head's settings judge this run."}
	for _, tc := range []struct {
		name          string
		judging       *report.Judging
		md, txt, none []string
	}{
		{"loosened", loosened,
			[]string{"### Settings the head changed", "| setting | base | head | judged with |", "| [tolerance] latency | 10 % | 1000 % | 10 % |", "| [[threshold]] p99 of group hello | below 20ms | absent | below 20ms |"},
			[]string{"settings the head changed:", "[tolerance] latency: base 10 %, head 1000 %, judged with 10 %"},
			nil},
		{"no base plan", noBase,
			[]string{"### Settings the head changed", noBase.Note},
			[]string{noBase.Note},
			[]string{"| setting |"}},
		{"one plan", nil, nil, nil, []string{"Settings the head changed", "settings the head changed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := reporttest.Regression()
			r.Judging = tc.judging
			md, txt := markdown(t, r), text(t, r)
			for _, w := range tc.md {
				if !strings.Contains(md, w) {
					t.Errorf("summary lacks %q:\n%s", w, md)
				}
			}
			for _, w := range tc.txt {
				if !strings.Contains(txt, w) {
					t.Errorf("terminal summary lacks %q:\n%s", w, txt)
				}
			}
			for _, w := range tc.none {
				if strings.Contains(md, w) || strings.Contains(txt, w) {
					t.Errorf("summaries hold %q", w)
				}
			}
			// The JSON report keeps it, for the verdict service's check.
			path := filepath.Join(t.TempDir(), "latest.json")
			if err := report.Write(path, r); err != nil {
				t.Fatal(err)
			}
			back, err := report.Read(path)
			if err != nil {
				t.Fatal(err)
			}
			a, _ := json.Marshal(back.Judging)
			b, _ := json.Marshal(tc.judging)
			if string(a) != string(b) {
				t.Errorf("the report reads back %s, want %s", a, b)
			}
		})
	}
}
