package tomlpos_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armsfile"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// TestThreeFilesOneWording: each of perfgate's three TOML files (the plan,
// the gate contract, the arms file) refuses a misspelt key on its line with
// the near miss, in tomlpos.UnknownKey's one wording, and a key far from
// any with the list of keys.
func TestThreeFilesOneWording(t *testing.T) {
	const group = "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n"
	const arms = "[base]\ncommand = [\"svc\", \"@PORT@\"]\n[head]\ncommand = [\"svc\", \"@PORT@\"]\n"
	readPlan := func(t *testing.T, src string) error {
		_, err := plan.Parse("plan.toml", []byte(src))
		return err
	}
	readGate := func(t *testing.T, src string) error {
		tree := t.TempDir()
		if err := os.MkdirAll(filepath.Join(tree, "perf"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tree, filepath.FromSlash(contract.GateFile)), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := contract.Load(tree)
		return err
	}
	readArms := func(t *testing.T, src string) error {
		_, err := armsfile.Parse("arms.toml", []byte(src))
		return err
	}
	for _, tc := range []struct {
		name  string
		read  func(*testing.T, string) error
		src   string
		line  string // FILE:LINE the refusal starts with
		key   string
		near  string // "" when no key is near
		where string
	}{
		{"plan top level", readPlan, group + "\n[laod]\nrate = 20\n", "plan.toml:6:", "laod", "load", "the plan's top level"},
		{"plan table", readPlan, "[load]\nrate = 20\ndurtion = \"60s\"\n" + group, "plan.toml:3:", "durtion", "duration", "[load]"},
		{"plan group", readPlan, group + "methd = \"GET\"\n", "plan.toml:5:", "methd", "method", `[[group]] "hello"`},
		{"gate top level", readGate, "build = \"make\"\nbinry = \"bin/svc\"\n", "perf/gate.toml:2:", "binry", "binary", "the gate file"},
		{"gate table", readGate, "build = \"make\"\n[prepare]\ncommand = [\"mint\"]\n", "perf/gate.toml:3:", "prepare.command", "prepare.commands", "the gate file"},
		{"arms top level", readArms, "stroe = true\n" + arms, "arms.toml:1:", "stroe", "store", "the arms file"},
		{"arms table", readArms, "[base]\ncommand = [\"svc\", \"@PORT@\"]\nreddy = \"/\"\n[head]\ncommand = [\"svc\", \"@PORT@\"]\n", "arms.toml:3:", "reddy", "ready", "[base]"},
		{"plan, no near miss", readPlan, "[ab]\nzzzz = 4\n" + group, "plan.toml:2:", "zzzz", "", "[ab]"},
		{"arms, no near miss", readArms, "listen = 1\n" + arms, "arms.toml:1:", "listen", "", "the arms file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.read(t, tc.src)
			if err == nil {
				t.Fatal("accepted")
			}
			if exit.Code(err) != exit.CannotJudge {
				t.Errorf("exit %d, want %d", exit.Code(err), exit.CannotJudge)
			}
			want := tc.line + ` unknown key "` + tc.key + `" in ` + tc.where + "; "
			if tc.near != "" {
				want += `did you mean "` + tc.near + `"?`
			} else {
				want += "the keys are "
			}
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got  %s\nwant %s...", err, want)
			}
		})
	}
}

// TestReaderWording: the getters' refusals, each on its key's line.
func TestReaderWording(t *testing.T) {
	src := "port = \"8080\"\npairs = 101\n[stage]\ntarget = 5\nwait = \"1h\"\non = 1\n"
	raw, pos, err := tomlpos.Read(src)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	r := tomlpos.Reader{Pos: pos, Report: func(line int, msg string) { got = append(got, strconv.Itoa(line)+": "+msg) }}
	r.Int(raw, nil, "port", "port = 8080", 1, 65535)
	r.Int(raw, nil, "pairs", "pairs = 4", 1, 100)
	st, _ := r.Table(raw, nil, "stage", "[stage]")
	r.Need(st, []string{"stage"}, "duration", "this stage", "duration", `duration = "30s"`, "[[load.stage]]")
	r.Dur(st, []string{"stage"}, "wait", `wait = "1s"`, false, 30*time.Minute)
	r.Bool(st, []string{"stage"}, "on", "on = true")
	want := []string{
		"1: port must be a whole number, not a string; write port = 8080",
		"2: pairs must be from 1 to 100, not 101; write pairs = 4",
		"3: this stage has no duration; write duration = \"30s\" under its [[load.stage]]",
		"5: wait 1h is beyond the limit of 30m; write wait = \"1s\"",
		"6: on must be true or false, not a whole number; write on = true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, _, err := tomlpos.Read("[a\n"); err == nil {
		t.Error("a syntax error was read")
	} else if line, msg, ok := tomlpos.Refusal(err); !ok || line != 2 || !strings.HasPrefix(msg, "this is not valid TOML (") {
		t.Errorf("syntax error: line %d %q %v", line, msg, ok)
	}
}
