package services

import (
	"reflect"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestPairTrees(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pair    Pair
		want    Tree // the base's
		refusal string
	}{
		{name: "defaults", pair: Pair{Head: "h", Base: "b", Project: "p"}, want: Tree{Dir: "b", Files: []string{"compose.yaml"}, Seeds: map[string][]string{}, Project: "p"}},
		{name: "seeds and files", pair: Pair{Head: "h", Base: "b", Project: "p", Files: []string{"a.yaml", "b.yaml"}, Seeds: []string{"db=x.sql", "db=y.sql"}},
			want: Tree{Dir: "b", Files: []string{"a.yaml", "b.yaml"}, Seeds: map[string][]string{"db": {"x.sql", "y.sql"}}, Project: "p"}},
		{name: "no base", pair: Pair{Head: "h"}, refusal: "perfgate services plan: --base is required"},
		{name: "bad seed", pair: Pair{Head: "h", Base: "b", Seeds: []string{"db"}}, refusal: "SERVICE=FILE"},
		{name: "bad env", pair: Pair{Head: "h", Base: "b", Env: []string{"=1"}}, refusal: "write NAME=VALUE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head, base, err := tc.pair.Trees("services plan")
			if tc.refusal != "" {
				if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("error %v, want a refusal naming %q", err, tc.refusal)
				}
				return
			}
			if err != nil || head.Dir != "h" || !reflect.DeepEqual(base, tc.want) {
				t.Fatalf("trees %+v %+v, %v; want the base %+v", head, base, err, tc.want)
			}
		})
	}
}
