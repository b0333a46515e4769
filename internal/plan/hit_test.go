package plan

import (
	"reflect"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
)

const loadGroup = "\n[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = 200\n"

// TestLoadHitRules: [load] takes the hit keys [experiment] has, with the
// same words and the same refusals (naming [load]), and the engine's rule
// follows them.
func TestLoadHitRules(t *testing.T) {
	for _, tc := range []struct {
		toml   string
		want   HitRule
		engine *load.HitRule
	}{
		{`hit_header = " X-Cache :  HIT "`, HitRule{HitHeader: "X-Cache: HIT"}, &load.HitRule{Header: "X-Cache", Value: "HIT"}},
		{`hit_header = "X-Cache"`, HitRule{HitHeader: "X-Cache"}, &load.HitRule{Header: "X-Cache"}},
		{"hit_field = \"cache.state\"\nhit_value = \"fresh\"", HitRule{HitField: "cache.state", HitValue: "fresh"}, &load.HitRule{Field: "cache.state", FieldValue: "fresh"}},
		{`hit_status = [203]`, HitRule{HitStatus: []int{203}}, nil},
		{``, HitRule{}, nil},
	} {
		p, err := Parse("plan.toml", []byte("[load]\nrate = 20\n"+tc.toml+"\n"+loadGroup))
		if err != nil {
			t.Errorf("%q: %v", tc.toml, err)
			continue
		}
		if h := p.Load.Hit; !reflect.DeepEqual(h, tc.want) || !reflect.DeepEqual(h.LoadRule(), tc.engine) || h.Written() != (tc.toml != "") {
			t.Errorf("%q: rule %+v engine %+v", tc.toml, h, h.LoadRule())
		}
	}
	for _, tc := range []struct{ toml, want string }{
		{"hit_status = [200]\nhit_header = \"X-Cache: HIT\"", `plan.toml:4: hit_status and hit_header both name what a hit is; keep one`},
		{"hit_value = true", `plan.toml:3: hit_value is the value of hit_field, and this [load] has no hit_field`},
		{"hit_header = \"X-Cache:\"", `plan.toml:3: hit_header "X-Cache:" has a colon and no value`},
		{"hit_fild = \"cache.hit\"", `plan.toml:3: unknown key "hit_fild" in [load]`},
	} {
		_, err := Parse("plan.toml", []byte("[load]\nrate = 20\n"+tc.toml+"\n"+loadGroup))
		if err == nil || !strings.Contains(err.Error(), tc.want) || exit.Code(err) != exit.CannotJudge {
			t.Errorf("%q:\n got %v\nwant exit 2 and %s", tc.toml, err, tc.want)
		}
	}
}

// TestHitRuleCounts: a status rule counts the answers of its statuses; a
// header or field rule takes the engine's count.
func TestHitRuleCounts(t *testing.T) {
	statuses := map[int]uint64{200: 30, 203: 10}
	if n := (HitRule{HitStatus: []int{203}}).Hits(statuses, 7); n != 10 {
		t.Errorf("by status: %d hits, want 10", n)
	}
	if n := (HitRule{HitHeader: "X-Cache: HIT"}).Hits(statuses, 7); n != 7 {
		t.Errorf("by header: %d hits, want 7", n)
	}
}
