package contract

import (
	"errors"
	"strings"

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

// gateKeys are a gate file's keys in the order docs/contract.md gives
// them; the keys of [legacy] and [prepare] are written dotted, as an
// unknown one of theirs is named ("legacy.shell"). [env] and [seeds] name
// the file's own variables and services, and [[control]] is the plan's
// (plan.ParseControls).
var (
	gateKeys = []string{"build", "build_image", "binary", "start", "check", "config", "config_env", "overrides", "prefix", "ready", "compose", "seeds", "plan", "generate", "env", "legacy", "prepare", "control"}
	subKeys  = map[string][]string{
		"legacy":  {"legacy.script", "legacy.function", "legacy.args"},
		"prepare": {"prepare.commands"},
	}
)

// decodeGate decodes a gate file into g and returns each key's line
// ("build", "env.NAME", "legacy.script"), because the TOML decoder reports
// lines for syntax errors only and a refusal must name the line to fix.
func decodeGate(data []byte, g *gateTOML) (toml.MetaData, map[string]int, error) {
	raw, pos, err := tomlpos.Read(string(data))
	if err != nil {
		var se *tomlpos.SyntaxError
		line, msg, _ := tomlpos.Refusal(err)
		switch {
		case errors.As(err, &se):
			return toml.MetaData{}, nil, exit.Refusef("%s:%d: %s: fix the TOML syntax", GateFile, line, se.Msg)
		case line > 0:
			return toml.MetaData{}, nil, exit.Refusef("%s:%d: %s, as docs/contract.md shows", GateFile, line, msg)
		}
		return toml.MetaData{}, nil, exit.Refusef("%s:1: reading the gate file: %w", GateFile, err)
	}
	for k, want := range keyKinds {
		if v, ok := raw[k]; ok && tomlpos.Kind(v) != want {
			return toml.MetaData{}, nil, exit.Refusef("%s:%d: %s: see docs/contract.md for each key's type", GateFile, pos.Line(k), tomlpos.WrongKind(k, want, v, ""))
		}
	}
	if err := unknownKey(raw, pos); err != nil {
		return toml.MetaData{}, nil, err
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

// unknownKey refuses the first key of the file (by line) that a gate file
// does not have, in the wording every perfgate file uses.
func unknownKey(raw map[string]any, pos *tomlpos.Positions) error {
	line, msg := 0, ""
	r := tomlpos.Reader{Pos: pos, Report: func(l int, m string) {
		if msg == "" || l < line {
			line, msg = l, m
		}
	}}
	r.Known(raw, nil, "the gate file", gateKeys...)
	for table, allowed := range subKeys {
		m, _ := raw[table].(map[string]any)
		for _, k := range r.SortedKeys(m, []string{table}) {
			if full := table + "." + k; !contains(allowed, full) {
				r.At([]string{table}, k, "%s", tomlpos.UnknownKey(full, "the gate file", allowed))
			}
		}
	}
	if msg == "" {
		return nil
	}
	sep := "; "
	if strings.HasSuffix(msg, "?") {
		sep = " "
	}
	return exit.Refusef("%s:%d: %s%ssee docs/contract.md", GateFile, line, msg, sep)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}
