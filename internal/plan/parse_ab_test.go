package plan

import (
	"reflect"
	"testing"
)

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

// The stricter of two plans' pairs (judging.go): a head cannot turn the
// base's fixed pairs into adaptive ones that may stop sooner.
func TestJudgingPairs(t *testing.T) {
	fixed := func(n int) AB { return AB{Pairs: n} }
	auto := func(lo, hi int) AB { return AB{Pairs: hi, Auto: true, MinPairs: lo, MaxPairs: hi} }
	for _, tc := range []struct {
		name       string
		base, head AB
		want       AB
		text       string
	}{
		{"fixed both: the larger", fixed(8), fixed(4), fixed(8), "8"},
		{"the head asks auto over the base's fixed 8: 16 fixed", fixed(8), auto(4, 16), fixed(16), "16"},
		{"the head asks auto up to 6 over fixed 8: 8 fixed", fixed(8), auto(2, 6), fixed(8), "8"},
		{"the head asks fixed 4 over the base's auto: 16 fixed", auto(4, 16), fixed(4), fixed(16), "16"},
		{"auto both: the larger bounds", auto(6, 12), auto(2, 16), auto(6, 16), `"auto" (6 to 16)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := judgingPairs(tc.base, tc.head)
			if !reflect.DeepEqual(got, tc.want) || pairsText(got) != tc.text {
				t.Fatalf("%+v (%s), want %+v (%s)", got, pairsText(got), tc.want, tc.text)
			}
		})
	}
}
