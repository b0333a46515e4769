package tomlpos

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// typeErr is how BurntSushi/toml reports a value of the wrong type for the
// Go field it decodes into: the line is buried in its text.
var typeErr = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): incompatible types: TOML value has type ([^;]+); destination has type (.+)$`)

// DecodeError turns an error of toml.Decode into the line to fix and a
// plain message: a syntax error's, or for a value of the wrong type
// "port must be a whole number, not a string". ok is false for any other error,
// whose text is then the message and whose line is unknown (0).
func DecodeError(err error) (line int, msg string, ok bool) {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return max(pe.Position.Line, 1), OneLine(pe.Message), true
	}
	if m := typeErr.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		key := m[2]
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			key = key[i+1:]
		}
		return max(n, 1), fmt.Sprintf("%s must be %s, not %s", key, kind(m[4]), kind(m[3])), true
	}
	return 0, OneLine(err.Error()), false
}

// kind names a Go type of the TOML library's message in a user's words.
func kind(goType string) string {
	switch t := strings.TrimSpace(goType); {
	case t == "string":
		return "a string"
	case t == "bool" || t == "boolean":
		return "true or false"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "a whole number"
	case strings.HasPrefix(t, "float"):
		return "a number"
	case t == "slice" || t == "array" || strings.HasPrefix(t, "[]"):
		return "an array"
	case t == "map" || t == "struct" || strings.HasPrefix(t, "map["):
		return "a table"
	default:
		return "a date or time"
	}
}

// Kind names the type of a value toml.Decode put in a map[string]any, in
// the words refusals use ("port must be a whole number, not a string").
func Kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "a whole number"
	case float64:
		return "a number"
	case bool:
		return "true or false"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	}
	return "a date or time"
}
