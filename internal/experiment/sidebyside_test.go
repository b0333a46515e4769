package experiment

import (
	"strings"
	"testing"
)

func TestSideBySideKneeSpread(t *testing.T) {
	var reps []*Report
	for _, k := range []float64{200, 180, 220} {
		r := onSale(t)
		r.Routine.Knee = &k
		reps = append(reps, r)
	}
	none := onSale(t)
	none.Routine.Knee = nil
	for _, tc := range []struct {
		name string
		reps []*Report
		want string
	}{
		{"three knees", reps, "the knee over 3 runs: median 200.0/s, from 180.0 to 220.0/s, a spread of 20.0 % of the median"},
		{"one run without", append(reps[:2:2], none), "the knee over 2 runs: median 190.0/s, from 180.0 to 200.0/s, a spread of 10.5 % of the median; 1 of 3 runs found none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb, err := SideBySideOf(tc.reps, []string{"a.json", "b.json", "c.json"})
			if err != nil {
				t.Fatal(err)
			}
			if sb.Knee.Text != tc.want {
				t.Errorf("knee %q, want %q", sb.Knee.Text, tc.want)
			}
			if len(sb.Figures) != 3 || len(sb.Figures[0].Values) != len(tc.reps[0].Stages) || len(sb.Figures[0].Values[0]) != 3 {
				t.Errorf("figures %+v", sb.Figures)
			}
			var b strings.Builder
			if err := WriteSideBySide(&b, sb); err != nil {
				t.Fatal(err)
			}
			t.Log("\n" + b.String())
			if !strings.Contains(b.String(), "stage     a.json  b.json  c.json") || !strings.Contains(b.String(), tc.want) {
				t.Errorf("text:\n%s", b.String())
			}
		})
	}
	if _, err := SideBySideOf(reps[:1], []string{"a.json"}); err == nil {
		t.Error("one run side by side: want a refusal")
	}
}
