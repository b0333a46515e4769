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
		{`hit_status = [200]`, HitRule{HitStatus: []int{200}}, &load.HitRule{Status: []int{200}}},
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
		// Only an expected answer is a hit: a status no group expects
		// would count as a failure, never as a hit.
		{"hit_status = [200, 203]", `plan.toml:3: hit_status lists 203, which no group expects: only an expected answer is a hit, so a 203 would count as a failure, never as a hit; add 203 to the expect of the groups it answers, or remove it from hit_status`},
	} {
		_, err := Parse("plan.toml", []byte("[load]\nrate = 20\n"+tc.toml+"\n"+loadGroup))
		if err == nil || !strings.Contains(err.Error(), tc.want) || exit.Code(err) != exit.CannotJudge {
			t.Errorf("%q:\n got %v\nwant exit 2 and %s", tc.toml, err, tc.want)
		}
	}
	// One group expecting the status is enough: the others' answers with
	// it are failures, and the engine counts no hit among them.
	two := "[load]\nrate = 20\nhit_status = [203]\n" + loadGroup + "\n[[group]]\nname = \"b\"\npath = \"/b\"\nexpect = [200, 203]\n"
	if _, err := Parse("plan.toml", []byte(two)); err != nil {
		t.Errorf("hit_status one group expects: %v", err)
	}
}

// An experiment loads one group: its hit_status must be a status that
// group expects, whatever the plan's other groups expect.
func TestExperimentHitStatusOfItsGroup(t *testing.T) {
	groups := loadGroup + "\n[[group]]\nname = \"b\"\npath = \"/b\"\nexpect = [200, 203]\n"
	exp := func(group string) []byte {
		return []byte("[experiment]\nmodel = \"closed\"\ngroup = \"" + group + "\"\nconcurrency = [1]\nstage = \"1s\"\nhit_status = [203]\n" + groups)
	}
	if _, err := Parse("plan.toml", exp("b")); err != nil {
		t.Errorf("hit_status its group expects: %v", err)
	}
	want := `plan.toml:6: hit_status lists 203, which group "a" does not expect: only an expected answer is a hit, so a 203 would count as a failure, never as a hit; add 203 to the expect of group "a", or remove it from hit_status`
	if _, err := Parse("plan.toml", exp("a")); err == nil || !strings.Contains(err.Error(), want) || exit.Code(err) != exit.CannotJudge {
		t.Errorf("hit_status its group does not expect:\n got %v\nwant exit 2 and %s", err, want)
	}
}
