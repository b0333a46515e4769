package plan

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
)

const secretValue = "tok-9f8e7d6c5b4a-SECRET"

const varsPlan = `[vars]
greeting = "hello"
region = { value = "eu", file = "region.txt" }
api_token = { secret = true }
session = { secret = true, file = "session.txt" }
plain = { value = "p" }

[[group]]
name = "hello"
path = "/hello/{greeting}?region={region}&p={plain}"
headers = { Authorization = "Bearer {api_token}", Cookie = "s={session}" }
expect = 200
`

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestResolveVarsPrecedence(t *testing.T) {
	dir := planDir(t, 10)
	writeFile(t, filepath.Join(dir, "region.txt"), "us\r\n")
	writeFile(t, filepath.Join(dir, "session.txt"), "sess-from-file\n")
	writeFile(t, filepath.Join(dir, "flag-token"), secretValue+"\n")
	p, err := Parse("plan.toml", []byte(varsPlan))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		flags []string
		env   map[string]string
		want  map[string]string
	}{
		{"plan value, file, env", nil, map[string]string{"PERFGATE_VAR_API_TOKEN": secretValue},
			map[string]string{"greeting": "hello", "region": "us", "api_token": secretValue, "session": "sess-from-file", "plain": "p"}},
		{"env beats file and value", nil, map[string]string{"PERFGATE_VAR_API_TOKEN": "t", "PERFGATE_VAR_REGION": "ap", "PERFGATE_VAR_GREETING": "hi"},
			map[string]string{"greeting": "hi", "region": "ap", "api_token": "t"}},
		{"flag beats env", []string{"region=sa", "api_token=@flag-token", "greeting=a=b"}, map[string]string{"PERFGATE_VAR_API_TOKEN": "t", "PERFGATE_VAR_REGION": "ap"},
			map[string]string{"region": "sa", "api_token": secretValue, "greeting": "a=b"}},
	} {
		v, err := ResolveVars(p, tc.flags, env(tc.env))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for k, want := range tc.want {
			if got, _ := v.Get(k); got != want {
				t.Errorf("%s: %s = %q, want %q", tc.name, k, got, want)
			}
		}
	}
}

func TestResolveVarsRefusals(t *testing.T) {
	dir := planDir(t, 10)
	writeFile(t, filepath.Join(dir, "session.txt"), "s\n")
	p, err := Parse("plan.toml", []byte(varsPlan))
	if err != nil {
		t.Fatal(err)
	}
	noRegion := strings.Replace(varsPlan, `region = { value = "eu", file = "region.txt" }`, `region = { file = "region.txt" }`, 1)
	pNoRegion, err := Parse("plan.toml", []byte(noRegion))
	if err != nil {
		t.Fatal(err)
	}
	token := map[string]string{"PERFGATE_VAR_API_TOKEN": secretValue}
	for _, tc := range []struct {
		name  string
		p     *Plan
		flags []string
		env   map[string]string
		want  string
	}{
		{"missing secret", p, nil, map[string]string{"PERFGATE_VAR_REGION": "x"}, "plan.toml:4: variable api_token has no value; pass --var api_token=VALUE (or =@FILE), or set PERFGATE_VAR_API_TOKEN"},
		{"unreadable variable file", pNoRegion, nil, token, "plan.toml:3: variable region: cannot read region.txt (open region.txt: no such file or directory); write file = a readable path relative to the plan's folder, or pass --var region=... or PERFGATE_VAR_REGION"},
		{"flag without =", p, []string{secretValue}, token, "--var argument 1 has no '='; write --var NAME=VALUE or --var NAME=@FILE"},
		{"flag names no variable", p, []string{"regoin=x"}, token, "plan.toml:1: --var regoin names no variable of the plan; declare it under [vars], such as regoin = { secret = true }"},
		{"flag given twice", p, []string{"region=a", "api_token=x", "region=b"}, token, "--var region is given twice (arguments 1 and 3); give each variable once"},
		{"flag file missing", p, []string{"api_token=@nope"}, nil, "--var api_token=@nope: cannot read the file (open nope: no such file or directory); write --var api_token=@PATH naming a readable file"},
		{"secret with a line break", p, nil, map[string]string{"PERFGATE_VAR_API_TOKEN": secretValue + "\nX-Evil: 1", "PERFGATE_VAR_REGION": "x"}, "plan.toml:4: variable api_token from PERFGATE_VAR_API_TOKEN holds a line break or control character, which cannot go into a request; give it a single-line value"},
	} {
		_, err := ResolveVars(tc.p, tc.flags, env(tc.env))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if exit.Code(err) != exit.CannotJudge {
			t.Errorf("%s: exit %d, want 2", tc.name, exit.Code(err))
		}
		if err.Error() != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, tc.want)
		}
		if strings.Contains(err.Error(), secretValue) {
			t.Errorf("%s: the error prints the secret: %s", tc.name, err)
		}
	}
}

func TestSecretReachesRequestButNotPrints(t *testing.T) {
	planDir(t, 10)
	writeFile(t, "session.txt", "s\n")
	p, err := Parse("plan.toml", []byte(varsPlan))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ResolveVars(p, nil, env(map[string]string{"PERFGATE_VAR_API_TOKEN": secretValue}))
	if err != nil {
		t.Fatal(err)
	}
	if v.Secret("greeting") || !v.Secret("api_token") || !v.Secret("session") {
		t.Errorf("secret flags: greeting %v, api_token %v, session %v", v.Secret("greeting"), v.Secret("api_token"), v.Secret("session"))
	}
	src, _, err := p.Source(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := src.Next(load.Measured)
	if r.Path != "/hello/hello?region=eu&p=p" {
		t.Errorf("path %q", r.Path)
	}
	line := fmt.Sprintf("GET %s %s: %s", r.Path, r.Header[0].Name, r.Header[0].Value)
	if !strings.Contains(line, "Bearer "+secretValue) {
		t.Fatalf("the request does not carry the token: %s", v.Redact(line))
	}
	red := v.Redact(line)
	if strings.Contains(red, "9f8e7d6c5b4a") || !strings.Contains(red, "Bearer ***") {
		t.Errorf("Redact = %s", red)
	}
}

func TestVarsStringHidesSecrets(t *testing.T) {
	planDir(t, 10)
	writeFile(t, "session.txt", "session-secret-value\n")
	p, err := Parse("plan.toml", []byte(varsPlan))
	if err != nil {
		t.Fatal(err)
	}
	v, err := ResolveVars(p, nil, env(map[string]string{"PERFGATE_VAR_API_TOKEN": secretValue}))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{v.String(), fmt.Sprint(v), fmt.Sprintf("%v %+v %#v %s", v, v, v, v)} {
		if strings.Contains(s, secretValue) || strings.Contains(s, "session-secret-value") {
			t.Errorf("printing the variables shows a secret: %s", s)
		}
		if !strings.Contains(s, `api_token="***" (PERFGATE_VAR_API_TOKEN)`) || !strings.Contains(s, `greeting="hello" (the plan)`) {
			t.Errorf("printing the variables does not say what they are: %s", s)
		}
	}
	if got := v.Redact("a " + secretValue + " b session-secret-value"); got != "a *** b ***" {
		t.Errorf("Redact = %q", got)
	}
	var nilVars *Vars
	if nilVars.Redact("x") != "x" || nilVars.String() != "no variables" {
		t.Error("a nil *Vars must redact nothing and print safely")
	}
}

func TestSecretNames(t *testing.T) {
	for name, want := range map[string]bool{
		"api_token": true, "ncp_emergency_token": true, "token": true, "dpop_key": true, "client_secret": true,
		"db_password": true, "PASSWORD": true, "Api_Token": true,
		"tokens": false, "keyring": false, "region": false, "monkey": false, "secretary": false,
	} {
		if got := isSecretName(name); got != want {
			t.Errorf("isSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestSecretMasksAreTheFormsSent: a secret with a space goes into a path
// as %20 (targetSafe), not as the + of a query escape; the masks must be
// exactly the forms that leave perfgate, so what is sent is what is hidden.
func TestSecretMasksAreTheFormsSent(t *testing.T) {
	planDir(t, 10)
	const plan = `[vars]
who_token = { secret = true }

[[group]]
name = "p"
path = "/u/{who_token}?x=1"
headers = { Authorization = "Bearer {who_token}" }
expect = 200
`
	p, err := Parse("plan.toml", []byte(plan))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "the boss/é?x"
	v, err := ResolveVars(p, nil, env(map[string]string{"PERFGATE_VAR_WHO_TOKEN": secret}))
	if err != nil {
		t.Fatal(err)
	}
	src, _, err := p.Source(v, 1)
	if err != nil {
		t.Fatal(err)
	}
	r := src.Next(load.Measured)
	sentPath := strings.TrimSuffix(strings.TrimPrefix(r.Path, "/u/"), "?x=1")
	sentHeader := strings.TrimPrefix(r.Header[0].Value, "Bearer ")
	masks := map[string]bool{}
	for _, m := range v.Secrets() {
		masks[m] = true
	}
	want := map[string]bool{sentPath: true, sentHeader: true}
	if !reflect.DeepEqual(masks, want) {
		t.Fatalf("masks %q, want the forms sent %q", v.Secrets(), []string{sentPath, sentHeader})
	}
	if got := v.Redact("GET " + r.Path + " Authorization: " + r.Header[0].Value); strings.Contains(got, "boss") {
		t.Fatalf("redacted request still shows the secret: %s", got)
	}
	err = v.RedactError(fmt.Errorf("dial: %w", fmt.Errorf("lookup %s: no such host", sentPath)))
	if strings.Contains(err.Error(), "boss") {
		t.Fatalf("inner error not redacted: %v", err)
	}
}
