package plan

import (
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/tomlpos"
)

// isSecretName is the naming rule that makes a variable secret whatever the
// plan says: tokens, keys, secrets and passwords are never printed.
func isSecretName(name string) bool {
	n := strings.ToLower(name)
	if n == "token" || n == "key" || n == "secret" {
		return true
	}
	for _, suf := range []string{"_token", "_key", "_secret", "password"} {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

func (ps *parser) vars(raw map[string]any) {
	t, ok := ps.Table(raw, nil, "vars", `[vars] with name = "value" lines`)
	if !ok {
		return
	}
	path := []string{"vars"}
	for _, name := range ps.SortedKeys(t, path) {
		v := Var{Name: name, Line: ps.Line(tomlpos.Join(path, name)), Secret: isSecretName(name)}
		if !isIdent(name) {
			ps.At(path, name, "variable name %q is not an identifier; write letters, digits and _ only, such as api_token", name)
			continue
		}
		vp := tomlpos.Join(path, name)
		switch val := t[name].(type) {
		case string:
			v.Value, v.Has = val, true
		case map[string]any:
			ps.Known(val, vp, "variable "+name, "value", "file", "secret")
			if s, ok := ps.Str(val, vp, "value", `value = "text"`); ok {
				v.Value, v.Has = s, true
			}
			if s, ok := ps.Str(val, vp, "file", `file = "../target/perf-run/token"`); ok {
				if s == "" {
					ps.At(vp, "file", "file is empty; write file = \"../target/perf-run/%s\"", name)
				}
				v.File = s
			}
			if b, ok := ps.Bool(val, vp, "secret", "secret = true"); ok {
				if !b && v.Secret {
					ps.At(vp, "secret", "variable %s is secret by its name (…_token, …_key, …_secret, …password); remove secret = false or rename the variable", name)
				}
				v.Secret = v.Secret || b
			}
		default:
			ps.At(path, name, "%s", tomlpos.WrongKind("variable "+name, "a string or a table", val, fmt.Sprintf(`%s = "value" or %s = { secret = true }`, name, name)))
			continue
		}
		if v.Secret && v.Has {
			// A secret written into a committed plan is already leaked.
			ps.At(path, name, "variable %s is a secret and its value must not be written in the plan; write %s = { secret = true } and pass --var %s=@FILE or PERFGATE_VAR_%s", name, name, name, strings.ToUpper(name))
			v.Value, v.Has = "", false
		}
		ps.p.Vars = append(ps.p.Vars, v)
	}
}
