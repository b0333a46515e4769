package contract

import (
	"errors"

	"github.com/BurntSushi/toml"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// keyKinds is the TOML type of each top-level key of a gate file. The TOML
// library silently skips a value of the wrong type for a table field
// (env = 3), so every key is checked here, on its line.
var keyKinds = map[string]string{
	"build": "a string", "binary": "a string", "start": "a string", "check": "a string",
	"config": "a string", "config_env": "a string", "overrides": "a string", "prefix": "a string",
	"ready": "a string", "plan": "a string", "build_image": "a string", "compose": "an array", "generate": "an array", "seeds": "a table",
	"env": "a table", "legacy": "a table", "prepare": "a table", "control": "an array",
}

// decodeGate decodes a gate file into g and returns each key's line
// ("build", "env.NAME", "legacy.script"), because the TOML decoder reports
// lines for syntax errors only and a refusal must name the line to fix.
func decodeGate(data []byte, g *gateTOML) (toml.MetaData, map[string]int, error) {
	pos, err := tomlpos.Scan(string(data))
	var deep *tomlpos.TooDeep
	if errors.As(err, &deep) {
		return toml.MetaData{}, nil, exit.Refusef("%s:%d: %v, as docs/contract.md shows", GateFile, deep.Line, err)
	}
	var raw map[string]any
	if _, err := toml.Decode(string(data), &raw); err != nil {
		line, msg, _ := tomlpos.DecodeError(err)
		return toml.MetaData{}, nil, exit.Refusef("%s:%d: %s: fix the TOML syntax", GateFile, max(line, 1), msg)
	}
	for k, want := range keyKinds {
		if v, ok := raw[k]; ok && tomlpos.Kind(v) != want {
			return toml.MetaData{}, nil, exit.Refusef("%s:%d: %s must be %s, not %s: see docs/contract.md for each key's type", GateFile, pos.Line(k), k, want, tomlpos.Kind(v))
		}
	}
	md, err := toml.Decode(string(data), g)
	if err != nil {
		line, msg, ok := tomlpos.DecodeError(err)
		if !ok {
			return md, nil, exit.Refusef("%s:1: %s: see docs/contract.md for each key's type", GateFile, msg)
		}
		return md, nil, exit.Refusef("%s:%d: %s: see docs/contract.md for each key's type", GateFile, line, msg)
	}
	return md, pos.Dotted(), nil
}
