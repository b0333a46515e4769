package controls_test

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

func TestPreflightRefusesStoreChecksWithoutAStore(t *testing.T) {
	const groups = "[[group]]\nname = \"g\"\npath = \"/g\"\nexpect = 200\n"
	cases := []struct {
		name, extra, want string
	}{
		{"store writes", "[[store_writes]]\ngroup = \"g\"\ntable = \"items\"\n", "plan.toml:5: [[store_writes]]"},
		{"sql counter", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nsql = \"SELECT 1\"\nmax_per_request = 5\n", "plan.toml:5: counter c reads sql"},
		{"http counter", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nurl = \"/calls\"\nmax_per_request = 5\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := plan.Parse("plan.toml", []byte(groups+c.extra))
			if err != nil {
				t.Fatal(err)
			}
			if err := controls.Preflight(p, p.Controls, true); err != nil {
				t.Fatalf("with a store: %v", err)
			}
			err = controls.Preflight(p, p.Controls, false)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("an HTTP counter needs no store: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || exit.Code(err) != exit.CannotJudge):
				t.Fatalf("Preflight = %v, want exit 2 naming %q", err, c.want)
			}
		})
	}
}
