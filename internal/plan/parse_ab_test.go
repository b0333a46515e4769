package plan

import "testing"

func TestPairsAuto(t *testing.T) {
	planDir(t, 10)
	for _, tc := range []struct {
		name                      string
		ab                        string
		auto                      bool
		pairs, minPairs, maxPairs int
	}{
		{"default", "", false, 8, 0, 0},
		{"fixed", "pairs = 6\n", false, 6, 0, 0},
		{"auto with the default bounds", "pairs = \"auto\"\n", true, 16, 4, 16},
		{"auto with bounds", "pairs = \"auto\"\nmin_pairs = 6\nmax_pairs = 12\n", true, 12, 6, 12},
		{"auto with one look", "pairs = \"auto\"\nmin_pairs = 8\nmax_pairs = 8\n", true, 8, 8, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse("plan.toml", []byte("[ab]\n"+tc.ab+hello))
			if err != nil {
				t.Fatal(err)
			}
			a := p.AB
			if a.Auto != tc.auto || a.Pairs != tc.pairs || a.MinPairs != tc.minPairs || a.MaxPairs != tc.maxPairs {
				t.Fatalf("auto %v, pairs %d, min %d, max %d; want %v, %d, %d, %d", a.Auto, a.Pairs, a.MinPairs, a.MaxPairs, tc.auto, tc.pairs, tc.minPairs, tc.maxPairs)
			}
		})
	}
}
