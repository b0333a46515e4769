package gate

import (
	"reflect"
	"testing"

	"github.com/perfgate/perfgate/internal/armsfile"
	"github.com/perfgate/perfgate/internal/pairs"
)

// An arms file's arms become the gate's pair, each tagged with its role
// and its commit, their environment in name order on every run.
func TestFromArmsFile(t *testing.T) {
	f, err := armsfile.Parse("arms.toml", []byte(`
[base]
command = ["bin/svc", "--addr", "127.0.0.1:@PORT@"]
env     = { SVC_B = "2", SVC_A = "@PORT@" }
commit  = "3f2a1c9"

[head]
command = ["bin/svc", "--addr", "127.0.0.1:@PORT@"]
`))
	if err != nil {
		t.Fatal(err)
	}
	arms := FromArmsFile(f)
	if len(arms) != 2 || arms[0].Role != pairs.RoleBase || arms[1].Role != pairs.RoleHead {
		t.Fatalf("arms %+v, want base then head", arms)
	}
	if got, want := arms[0].Env, []string{"SVC_A=@PORT@", "SVC_B=2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("env %v, want %v in name order", got, want)
	}
	if arms[0].Info.Commit != "3f2a1c9" || arms[0].Info.Name != "base" {
		t.Errorf("base's build %+v, want its commit and role", arms[0].Info)
	}
}
