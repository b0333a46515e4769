package exit

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestCode(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, 0},
		{"plain", errors.New("boom"), 2},
		{"regression", Regressionf("p99 breached"), 1},
		{"wrapped regression", fmt.Errorf("gate: %w", Regressionf("x")), 1},
		{"refused", Refusef("plan.toml:3: bad"), 2},
		{"refuse nil", Refuse(nil), 0},
	} {
		if got := Code(tc.err); got != tc.want {
			t.Errorf("%s: Code = %d, want %d", tc.name, got, tc.want)
		}
	}
}

func TestWord(t *testing.T) {
	for _, tc := range []struct {
		code int
		want string
	}{
		{Pass, "pass"},
		{Regression, "regression"},
		{CannotJudge, "cannot-judge"},
		{3, "cannot-judge"},
	} {
		if got := Word(tc.code); got != tc.want {
			t.Errorf("Word(%d) = %q, want %q", tc.code, got, tc.want)
		}
	}
}

func TestParseFlagsSaysARefusalOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string // "" for none
		wantOut string // what reaches the flag set's output
	}{
		{"good", []string{"-n", "3"}, "", ""},
		{"bad value", []string{"-n", "lots"}, "perfgate run: invalid value \"lots\" for flag -n", ""},
		{"unknown flag", []string{"-x"}, "perfgate run: flag provided but not defined: -x (see `perfgate run -h`)", ""},
		{"help", []string{"-h"}, flag.ErrHelp.Error(), "Usage of perfgate run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			fs := flag.NewFlagSet("perfgate run", flag.ContinueOnError)
			fs.SetOutput(&out)
			fs.Int("n", 1, "how many")
			err := ParseFlags(fs, tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("ParseFlags: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("ParseFlags: %v, want %q", err, tc.wantErr)
			}
			if tc.wantErr != "" && !errors.Is(err, flag.ErrHelp) && Code(err) != CannotJudge {
				t.Errorf("exit code %d, want %d", Code(err), CannotJudge)
			}
			if tc.wantOut == "" && out.Len() > 0 {
				t.Errorf("the flag package printed %q; a refusal is said once, by the caller", out.String())
			}
			if tc.wantOut != "" && !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("-h printed %q, want the usage", out.String())
			}
		})
	}
}

func TestLineNamesTheProgramOnce(t *testing.T) {
	for _, tc := range []struct{ program, msg, want string }{
		{"perfgate", "perfgate run: bad", "perfgate run: bad"},
		{"perfgate", "perfgate: bad", "perfgate: bad"},
		{"perfgate", "plan.toml:3: bad", "perfgate: plan.toml:3: bad"},
		{"perfgate", "perfgate-verdictd said no", "perfgate: perfgate-verdictd said no"},
		{"perfgate-verdictd", "perfgate-verdictd serve: bad", "perfgate-verdictd serve: bad"},
		{"perfgate-verdictd", "--reads \"x\": bad", "perfgate-verdictd: --reads \"x\": bad"},
	} {
		if got := Line(tc.program, errors.New(tc.msg)); got != tc.want {
			t.Errorf("Line(%q, %q) = %q, want %q", tc.program, tc.msg, got, tc.want)
		}
	}
}

func TestNoArgumentsRefusesWordsTheFlagsLeft(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" when accepted
	}{
		{[]string{"-on", "-n", "2"}, ""},
		{[]string{"-on=false", "-n", "2"}, ""},
		{[]string{"-on", "false", "-n", "2"}, `perfgate demo: unexpected argument "false"`},
		{[]string{"stray"}, `perfgate demo: unexpected argument "stray"`},
	} {
		fs := flag.NewFlagSet("perfgate demo", flag.ContinueOnError)
		fs.Bool("on", false, "")
		fs.Int("n", 1, "")
		if err := ParseFlags(fs, tc.args); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		err := NoArguments(fs)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || Code(err) != CannotJudge):
			t.Errorf("%q: %v (exit %d), want %q, exit 2", tc.args, err, Code(err), tc.want)
		}
	}
}
