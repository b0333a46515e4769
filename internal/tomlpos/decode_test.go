package tomlpos

import (
	"errors"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestDecodeError(t *testing.T) {
	type arm struct {
		Command []string          `toml:"command"`
		Port    int               `toml:"port"`
		Env     map[string]string `toml:"env"`
		Store   bool              `toml:"store"`
	}
	type file struct {
		Store bool `toml:"store"`
		Base  arm  `toml:"base"`
	}
	for _, tc := range []struct {
		src  string
		line int
		msg  string
	}{
		{"store = true\n[base]\n\nport = \"8080\"\n", 4, "port must be a whole number, not a string"},
		{"[base]\ncommand = \"./svc\"\n", 2, "command must be an array, not a string"},
		{"store = 1\n", 1, "store must be true or false, not a whole number"},
		{"[base]\nport = 80.5\n", 2, "port must be a whole number, not a number"},
		{"[base\n", 2, "expected '.' or ']' to end table name, but got '\\n' instead"},
	} {
		var f file
		_, err := toml.Decode(tc.src, &f)
		if err == nil {
			t.Fatalf("%q decoded", tc.src)
		}
		line, msg, ok := DecodeError(err)
		if !ok || line != tc.line || msg != tc.msg {
			t.Errorf("%q: line %d %q (%v), want line %d %q", tc.src, line, msg, ok, tc.line, tc.msg)
		}
	}
	if _, msg, ok := DecodeError(errors.New("other")); ok || msg != "other" {
		t.Errorf("another error: %q %v", msg, ok)
	}
}
