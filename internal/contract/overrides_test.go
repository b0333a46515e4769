package contract

import (
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestParseOverrides(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
		err      string
	}{
		{"pairs, comments, blanks, CRLF", "# arm\n\nFERROFED__A=1\r\n  FERROFED__B = x\nFERROFED__C=\"q v\"\nFERROFED__D='@PORT@'\nFERROFED__E=\n", []string{"FERROFED__A=1", "FERROFED__C=q v", "FERROFED__D=@PORT@", "FERROFED__E="}, "perf/arm.env:4: \"FERROFED__B =...\" has a space before =: write FERROFED__B=VALUE"},
		{"a line without the prefix", "FERROFED__A=1\nRUST_LOG=debug\n", nil, `perf/arm.env:2: "RUST_LOG=..." sets no FERROFED__ variable`},
		{"the prefix alone", "FERROFED__=1\n", nil, "perf/arm.env:1:"},
		{"export keyword", "export FERROFED__A=1\n", nil, "perf/arm.env:1:"},
		{"no assignment", "FERROFED__A\n", nil, "perf/arm.env:1:"},
		{"set twice", "FERROFED__A=1\nFERROFED__A=2\n", nil, "perf/arm.env:2: FERROFED__A is already set on line 1"},
		{"unknown placeholder", "FERROFED__A=@TOKEN@\n", nil, "perf/arm.env:1: FERROFED__A uses the placeholder @TOKEN@"},
		{"lower-case placeholder is a placeholder too", "FERROFED__A=@port@\n", nil, "@port@"},
		{"secrets stay out of the message", "SECRET_TOKEN=hunter2\n", nil, `"SECRET_TOKEN=..."`},
		// A line that is no NAME=VALUE may still hold a secret: it is
		// quoted no further than a name of the prefix, or not at all.
		{"a value without its =", "FERROFED__TOKEN hunter2\n", nil, `perf/arm.env:1: "FERROFED__TOKEN..." sets no FERROFED__ variable`},
		{"a colon for the =", "FERROFED__TOKEN: hunter2=x\n", nil, `perf/arm.env:1: "FERROFED__TOKEN..." sets no`},
		{"a token on a line of its own", "FERROFED__A=1\nhunter2\n", nil, "perf/arm.env:2: this line sets no FERROFED__ variable"},
		{"an exported name without =", "export FERROFED__TOKEN hunter2\n", nil, `perf/arm.env:1: "export FERROFED__TOKEN..."`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseOverrides("perf/arm.env", []byte(tt.in), "FERROFED__")
			if tt.want != nil {
				// The first case is valid except for its fourth line.
				in := strings.Replace(tt.in, "  FERROFED__B = x\n", "", 1)
				got, err := ParseOverrides("perf/arm.env", []byte(in), "FERROFED__")
				if err != nil || !equal(got, tt.want) {
					t.Fatalf("got %q, %v; want %q", got, err, tt.want)
				}
			}
			wantRefusal(t, err, tt.err)
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the refusal prints the value: %v", err)
			}
		})
	}
}

// FuzzParseOverrides: whatever the file holds, the parser returns either
// exit 2 naming the file, or pairs that each set a distinct prefixed variable
// with a one-line value and no placeholder but @PORT@ and @DIR@.
func FuzzParseOverrides(f *testing.F) {
	for _, s := range []string{
		"FERROFED__A=1\n",
		"# c\n\nFERROFED__SERVER__PORT=@PORT@\r\nFERROFED__DIR=\"@DIR@/x\"\n",
		"FERROFED__A=@X@",
		"RUST_LOG=1",
		"FERROFED__A=1\nFERROFED__A=2",
		"FERROFED__=",
		"  FERROFED__Q='a=b'  ",
		"\xff\xfe",
		"FERROFED__A=\x00",
		"=",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseOverrides("perf/arm.env", []byte(in), "FERROFED__")
		if err != nil {
			if exit.Code(err) != exit.CannotJudge || !strings.HasPrefix(err.Error(), "perf/arm.env") {
				t.Fatalf("error %v (exit %d) is not a refusal naming the file", err, exit.Code(err))
			}
			return
		}
		seen := map[string]bool{}
		for _, kv := range got {
			name, v, ok := strings.Cut(kv, "=")
			if !ok || !strings.HasPrefix(name, "FERROFED__") || len(name) == len("FERROFED__") || !envNameRe.MatchString(name) {
				t.Fatalf("pair %q sets no prefixed variable", kv)
			}
			if seen[name] {
				t.Fatalf("%s returned twice", name)
			}
			seen[name] = true
			if strings.ContainsAny(v, "\n\x00") {
				t.Fatalf("value of %s spans lines or holds NUL: %q", name, v)
			}
			if ph := badPlaceholder(v, renderPlaceholders); ph != "" {
				t.Fatalf("value of %s keeps the placeholder %s", name, ph)
			}
		}
	})
}
