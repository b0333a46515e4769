package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/plan"
)

func TestSecretsMaskedInActions(t *testing.T) {
	p, err := plan.Parse("plan.toml", []byte(`
[vars.api_token]
secret = true

[[group]]
name = "a"
path = "/a"
headers = { Authorization = "Bearer {api_token}" }
expect = 200
`))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"PERFGATE_VAR_API_TOKEN": "s3cr3t-value"}
	v, err := plan.ResolveVars(p, nil, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		actions string
		want    bool
	}{{"true", true}, {"", false}} {
		var out bytes.Buffer
		env["GITHUB_ACTIONS"] = tc.actions
		maskSecrets(&IO{Out: &out, Getenv: func(k string) string { return env[k] }}, v)
		got := strings.Contains(out.String(), "::add-mask::s3cr3t-value")
		if got != tc.want {
			t.Errorf("GITHUB_ACTIONS=%q: masked %v, want %v (out %q)", tc.actions, got, tc.want, out.String())
		}
	}
}
