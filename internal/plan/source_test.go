package plan

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// mustSource parses a plan written in a fresh folder holding ids.txt
// (id-1..id-ids) and returns its source for seed.
func mustSource(t *testing.T, plan string, ids int, seed int64) *RequestSource {
	t.Helper()
	planDir(t, ids)
	p, err := Parse("plan.toml", []byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ResolveVars(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.NewRequestSource(v, seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func itemPlan(draw string) string {
	return `[ab]
pairs = 1
rate = 1
warmup = "1s"
measure = "1s"
[data.ids]
file = "ids.txt"
` + draw + `
[[group]]
name = "item"
path = "/items/{ids}"
headers = { X-Id = "{ids}" }
body = '{"id": "{ids}", "lit": "{{ids}}", "obj": {"a": {}}}'
expect = 200
`
}

func draws(s load.Source, stage load.Stage, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strings.TrimPrefix(s.Next(stage).Path, "/items/")
	}
	return out
}

func TestRenderFillsEveryPlaceholderOnceADraw(t *testing.T) {
	s := mustSource(t, itemPlan(""), 100, 7)
	r := s.Next(load.Measured)
	id := strings.TrimPrefix(r.Path, "/items/")
	want := fmt.Sprintf(`{"id": "%s", "lit": "{ids}", "obj": {"a": {}}}`, id)
	if string(r.Body) != want || r.Header[0] != (load.Header{Name: "X-Id", Value: id}) || r.Method != "GET" || r.Group != 0 {
		t.Errorf("request %+v body %s, want one draw %s everywhere and the JSON braces kept", r, r.Body, id)
	}
}

func TestSameSeedSameSequence(t *testing.T) {
	for _, draw := range []string{"", `draw = "zipf"` + "\nexponent = 0.9", `exhausted = "reshuffle"`} {
		a := mustSource(t, itemPlan(draw), 500, 42)
		b := mustSource(t, itemPlan(draw), 500, 42)
		c := mustSource(t, itemPlan(draw), 500, 43)
		// Different warm-up lengths must not move the measured sequence.
		draws(a, load.Warmup, 10)
		draws(b, load.Warmup, 70)
		sa, sb, sc := draws(a, load.Measured, 900), draws(b, load.Measured, 900), draws(c, load.Measured, 900)
		if !reflect.DeepEqual(sa, sb) {
			t.Errorf("%q: two sources with seed 42 differ", draw)
		}
		if reflect.DeepEqual(sa, sc) {
			t.Errorf("%q: seeds 42 and 43 give the same sequence", draw)
		}
	}
}

func TestFreshNeverRepeatsAndWarmupIsDisjoint(t *testing.T) {
	const n = 1000
	s := mustSource(t, itemPlan(`exhausted = "reshuffle"`), n, 1)
	warmN, measN := 200, 800 // warmup_fraction 0.2
	warm, meas := draws(s, load.Warmup, warmN), draws(s, load.Measured, measN)
	seen := map[string]string{}
	for _, part := range []struct {
		name   string
		values []string
	}{{"warm-up", warm}, {"measured", meas}} {
		for _, v := range part.values {
			if prev, dup := seen[v]; dup {
				t.Fatalf("%s drew %s, already drawn by the %s part", part.name, v, prev)
			}
			seen[v] = part.name
		}
	}
	if len(seen) != n {
		t.Fatalf("drew %d distinct values, want all %d", len(seen), n)
	}
	if got := s.Reused(load.Measured); got != 0 || len(s.Notes()) != 0 {
		t.Fatalf("reused %d before the part ran out; notes %v", got, s.Notes())
	}
	more := draws(s, load.Measured, 10)
	for _, v := range more {
		if seen[v] != "measured" {
			t.Errorf("after running out, the measured stage drew %s from the %q part", v, seen[v])
		}
	}
	if s.Reused(load.Measured) != 10 || len(s.Notes()) != 1 {
		t.Errorf("reused %d, notes %v; want 10 and one note", s.Reused(load.Measured), s.Notes())
	}
	// The split takes every fifth line, so both parts span the file.
	for i := 1; i <= n; i++ {
		if want := map[bool]string{true: "warm-up", false: "measured"}[i%5 == 0]; seen[fmt.Sprintf("id-%d", i)] != want {
			t.Fatalf("id-%d is in the %s part, want %s (every fifth line)", i, seen[fmt.Sprintf("id-%d", i)], want)
		}
	}
}

func TestNoWarmupPart(t *testing.T) {
	s := mustSource(t, itemPlan("warmup_fraction = 0\nexhausted = \"reshuffle\""), 10, 1)
	got := map[string]bool{}
	for _, v := range append(draws(s, load.Warmup, 10), draws(s, load.Measured, 10)...) {
		got[v] = true
	}
	if len(got) != 10 {
		t.Errorf("with warmup_fraction = 0 both stages draw from all 10 values; got %d distinct", len(got))
	}
}

func TestPairSourcesAreDisjointAndArmsAgree(t *testing.T) {
	planDir(t, 1000)
	p, err := Parse("plan.toml", []byte(itemPlan("")))
	if err != nil {
		t.Fatal(err)
	}
	const pairs = 4
	seen := map[string]int{}
	for i := 0; i < pairs; i++ {
		base, _, err := p.PairSource(nil, 9, i, pairs)
		if err != nil {
			t.Fatal(err)
		}
		head, _, _ := p.PairSource(nil, 9, i, pairs)
		a, b := draws(base, load.Measured, 200), draws(head, load.Measured, 200)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("pair %d: the arms got different sequences", i)
		}
		for _, v := range a {
			if prev, dup := seen[v]; dup {
				t.Fatalf("pair %d drew %s, already measured in pair %d", i, v, prev)
			}
			seen[v] = i
		}
	}
	if _, _, err := p.PairSource(nil, 9, 4, pairs); err == nil {
		t.Error("pair 4 of 4 was accepted")
	}
}

// TestZipfRanks checks each rank's share against 1/r^s normalised: with
// 200,000 draws a share p has a standard error sqrt(p(1-p)/N), under 0.0012
// for any p; the test allows 5 of them, so a correct sampler fails about
// once in 1.7 million runs per rank checked.
func TestZipfRanks(t *testing.T) {
	const n, draws = 50, 200_000
	for _, s := range []float64{0.8, 1.0, 1.3} {
		src := mustSource(t, itemPlan(fmt.Sprintf("draw = \"zipf\"\nexponent = %v\nwarmup_fraction = 0", s)), n, 3)
		count := map[string]int{}
		for i := 0; i < draws; i++ {
			count[strings.TrimPrefix(src.Next(load.Measured).Path, "/items/")]++
		}
		var norm float64
		for r := 1; r <= n; r++ {
			norm += math.Pow(float64(r), -s)
		}
		for r := 1; r <= n; r++ {
			want := math.Pow(float64(r), -s) / norm
			got := float64(count[fmt.Sprintf("id-%d", r)]) / draws
			se := math.Sqrt(want * (1 - want) / draws)
			if math.Abs(got-want) > 5*se {
				t.Errorf("s=%v rank %d: share %.4f, want %.4f ± %.4f", s, r, got, want, 5*se)
			}
		}
	}
}

func TestZipfWarmupKeepsItsOwnHotSet(t *testing.T) {
	src := mustSource(t, itemPlan("draw = \"zipf\"\nexponent = 1.1"), 100, 5)
	measured := map[string]bool{}
	for _, v := range draws(src, load.Measured, 5000) {
		measured[v] = true
	}
	warm := draws(src, load.Warmup, 5000)
	for _, v := range warm {
		if measured[v] {
			t.Fatalf("the warm-up drew %s, which the measured stage uses", v)
		}
	}
	// The warm-up's rank 1 is line 5 (every fifth line): it must be its most drawn.
	c := map[string]int{}
	for _, v := range warm {
		c[v]++
	}
	if c["id-5"] < c["id-10"] || c["id-5"] < 5000/10 {
		t.Errorf("warm-up counts: id-5 %d, id-10 %d; the warm-up's catalogue lost its ranking", c["id-5"], c["id-10"])
	}
}

const threeGroups = `[[group]]
name = "a"
path = "/a"
expect = 200
weight = %d
[[group]]
name = "b"
path = "/b"
expect = 200
weight = %d
[[group]]
name = "c"
path = "/c"
expect = 200
weight = %d
`

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		plan   string
		n      int
		want   map[string]int
		prefix string // the first requests, in order
	}{
		{"in turn", fmt.Sprintf(strings.ReplaceAll(threeGroups, "weight = %d\n", "%.0d"), 0, 0, 0), 9, map[string]int{"/a": 3, "/b": 3, "/c": 3}, "/a /b /c /a"},
		{"by weight", "[load]\norder = \"weight\"\n" + fmt.Sprintf(threeGroups, 5, 1, 1), 700, map[string]int{"/a": 500, "/b": 100, "/c": 100}, "/a /a /b /a"},
	} {
		s := mustSource(t, tc.plan, 10, 1)
		got := map[string]int{}
		var first []string
		for i := 0; i < tc.n; i++ {
			r := s.Next(load.Measured)
			got[r.Path]++
			if i < 4 {
				first = append(first, r.Path)
			}
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: counts %v, want %v", tc.name, got, tc.want)
		}
		if strings.Join(first, " ") != tc.prefix {
			t.Errorf("%s: starts %v, want %s", tc.name, first, tc.prefix)
		}
	}
}

func TestExamplePlan(t *testing.T) {
	p, err := ParseFile(filepath.Join("..", "..", "testdata", "plans", "example.toml"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ResolveVars(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, groups, err := p.Source(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []load.Group{{Name: "hello", Expect: []int{200}}, {Name: "item", Expect: []int{200}}, {Name: "create", Expect: []int{201}}}
	if !reflect.DeepEqual(groups, want) {
		t.Errorf("groups %v, want %v", groups, want)
	}
	var got []string
	for i := 0; i < 3; i++ {
		r := src.Next(load.Measured)
		got = append(got, r.Method+" "+r.Path+" "+string(r.Body))
	}
	if !strings.HasPrefix(got[1], "GET /items/") || got[0] != "GET /hello " || got[2] != `POST /items {"name": "widget"}` {
		t.Errorf("first requests %q", got)
	}
	if p.ServerTiming != "Server-Timing" || p.Load.Rate != 50 || p.AB.Pairs != 4 {
		t.Errorf("settings %+v %+v %q", p.Load, p.AB, p.ServerTiming)
	}
}

func TestCheckLoadOverrides(t *testing.T) {
	planDir(t, 1000)
	p, err := Parse("plan.toml", []byte("[ab]\nrate = 4\npairs = 1\n[data.ids]\nfile = \"ids.txt\"\n"+strings.Replace(sevenGroups, "/population", "/population/{ids}", 1)))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		rate float64
		dur  time.Duration
		want string
	}{
		{30, 10 * time.Second, ""},
		{35, 10 * time.Second, `plan.toml:1: the load (--rate, --duration or [load]) sends group "contact-point-emergency" 5 arrivals/s (a 1/7 share of 35/s), reaching its max_rate of 5 (line 34); write a rate of 34 or less`},
		{30, 200 * time.Second, `plan.toml:5: the measured part of data ids holds 800 values, but the load (--rate, --duration or [load]) (1s warm-up and 3m20s measured at up to 30/s) draws up to 858 of them without replacement; add 73 values to ids.txt, or write draw = "zipf" or exhausted = "reshuffle" under [data.ids]`},
	} {
		l := p.Load
		l.Rate, l.Duration, l.Warmup = tc.rate, tc.dur, time.Second
		err := p.CheckLoad(l)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("rate %v for %s:\n got %v\nwant %s", tc.rate, tc.dur, err, tc.want)
		}
	}
}

// Values drawn into a path are made safe for the request line, whatever the
// data file holds; headers and bodies get them as written.
func TestPathValuesAreTargetSafe(t *testing.T) {
	dir := planDir(t, 1)
	writeFile(t, filepath.Join(dir, "names.txt"), "O'Brien\ncafé\n/a/b?x=1&y=2\n100%25\na<b>|c\n")
	p, err := Parse("plan.toml", []byte(`[vars]
who = { value = "the boss" }
[data.names]
file = "names.txt"
warmup_fraction = 0
exhausted = "reshuffle"
[[group]]
name = "find"
path = "/p/{names}?q={who}"
headers = { X-Name = "{names}" }
expect = 200
`))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ResolveVars(p, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.NewRequestSource(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/p/O'Brien?q=the%20boss":      "O'Brien",
		"/p/caf%C3%A9?q=the%20boss":    "café",
		"/p//a/b?x=1&y=2?q=the%20boss": "/a/b?x=1&y=2",
		"/p/100%25?q=the%20boss":       "100%25",
		"/p/a%3Cb%3E%7Cc?q=the%20boss": "a<b>|c",
	}
	got := map[string]string{}
	for range want {
		r := s.Next(load.Measured)
		got[r.Path] = r.Header[0].Value
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("path -> header value = %v, want %v", got, want)
	}
}

// Headers go out in the order their lines are written, those sharing a
// line (an inline table) in name order (docs/plan.md, "Request groups").
func TestHeaderOrder(t *testing.T) {
	for _, tc := range []struct{ name, headers, want string }{
		{"inline", "headers = { X-B = \"2\", X-A = \"1\" }\n", "X-A X-B"},
		{"one a line", "[group.headers]\nX-B = \"2\"\nX-A = \"1\"\n", "X-B X-A"},
	} {
		s := mustSource(t, "[[group]]\nname = \"h\"\npath = \"/h\"\nexpect = 200\n"+tc.headers, 0, 1)
		var got []string
		for _, h := range s.Next(load.Measured).Header {
			got = append(got, h.Name)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: headers %v, want %s", tc.name, got, tc.want)
		}
	}
}
