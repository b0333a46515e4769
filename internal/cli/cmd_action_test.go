package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// The action's entrypoint splits its one args string, runs the command and
// writes the verdict and exit-code outputs from the exit code, arguments it
// cannot split included (a cannot-judge, so the attempts' rules see it).
func TestActionEntrypoint(t *testing.T) {
	dir := t.TempDir()
	commit := strings.Repeat("ab", 20)
	baseMD := filepath.Join(dir, "base.md")
	line := "Performance: The base is `" + commit + "`, the previous release v1.4.0."
	os.WriteFile(baseMD, []byte("# Performance base\n\nThe base is `"+commit+"`, the previous release v1.4.0.\n\n- commit: `"+commit+"`\n- event: release\n- previous release: v1.4.0\n\nRelease notes line:\n\n"+line+"\n"), 0o644)
	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		verdict string
		out     string
	}{
		{"pass", []string{"version", ""}, exit.Pass, "pass", "perfgate "},
		{"refused", []string{"release-note", "--base-file '" + filepath.Join(dir, "missing dir", "base.md") + "'"}, exit.CannotJudge, "cannot-judge", ""},
		{"bad quoting", []string{"version", "'unterminated"}, exit.CannotJudge, "cannot-judge", ""},
		{"no command", []string{" ", ""}, exit.CannotJudge, "cannot-judge", ""},
		{"too many words", []string{"version", "a", "b"}, exit.CannotJudge, "cannot-judge", ""},
		{"the release-notes line", []string{"release-note", "--base-file " + baseMD}, exit.Pass, "pass", line},
		{"a two-word command in the command input", []string{"attempts next", "--attempt 1 --exit-code 2 --cpu-model X --record ''"}, exit.Pass, "pass", "retry\ncannot judge on X"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			output := filepath.Join(dir, tc.name+".out")
			os.WriteFile(output, nil, 0o644)
			env := map[string]string{"GITHUB_OUTPUT": output}
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), append([]string{"action"}, tc.args...), &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
			if got := exit.Code(err); got != tc.code {
				t.Fatalf("exit %d, want %d (%v)", got, tc.code, err)
			}
			b, _ := os.ReadFile(output)
			if !strings.Contains(string(b), "verdict<<") || !strings.Contains(string(b), "\n"+tc.verdict+"\n") {
				t.Errorf("GITHUB_OUTPUT holds %q, want verdict %s", b, tc.verdict)
			}
			if !strings.Contains(string(b), "exit-code<<") || !strings.Contains(string(b), "\n"+string(rune('0'+tc.code))+"\n") {
				t.Errorf("GITHUB_OUTPUT holds %q, want exit-code %d", b, tc.code)
			}
			if tc.name == "the release-notes line" && (!strings.Contains(string(b), "release-note<<") || !strings.Contains(string(b), "\n"+line+"\n")) {
				t.Errorf("GITHUB_OUTPUT holds %q, want the release-note output %q", b, line)
			}
			if !strings.Contains(out.String(), tc.out) {
				t.Errorf("stdout %q lacks %q", out.String(), tc.out)
			}
		})
	}
}

// A verdict service address with a password stops every action step before
// its command runs, the build job's too, without printing the password:
// found at the first attempt's decision, it would have cost a gate each.
func TestActionRefusesAServiceAddressWithAPassword(t *testing.T) {
	output := filepath.Join(t.TempDir(), "output")
	os.WriteFile(output, nil, 0o644)
	env := map[string]string{"GITHUB_OUTPUT": output, "PERFGATE_SERVICE": "https://ci:hunter2@verdicts.example.com"}
	var out, errb bytes.Buffer
	err := RunIO(context.Background(), []string{"action", "version", ""}, &IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
	if exit.Code(err) != exit.CannotJudge || err == nil || !strings.Contains(err.Error(), "https://***@verdicts.example.com") {
		t.Fatalf("exit %d (%v), want a refusal naming the address without its password", exit.Code(err), err)
	}
	if strings.Contains(out.String(), "perfgate ") {
		t.Errorf("the command ran: %q", out.String())
	}
	b, _ := os.ReadFile(output)
	if log := out.String() + errb.String() + string(b) + err.Error(); strings.Contains(log, "hunter2") {
		t.Errorf("the password reached the job's log: %s", log)
	}
	if !strings.Contains(string(b), "\ncannot-judge\n") || !strings.Contains(string(b), "exit-code<<") {
		t.Errorf("GITHUB_OUTPUT holds %q, want exit-code 2", b)
	}
}

// Outside a container, or for a command that needs no host network, the
// action runs the command itself.
func TestActionNeedsSibling(t *testing.T) {
	tests := []struct {
		name  string
		words []string
		self  string
		env   map[string]string
		want  bool
	}{
		{"run in a container", []string{"run", "--pairs", "2"}, "abc", nil, true},
		{"services up in a container", []string{"services", "up"}, "abc", nil, true},
		{"services plan needs no host", []string{"services", "plan"}, "abc", nil, false},
		{"attempts next needs no host", []string{"attempts", "next"}, "abc", nil, false},
		{"on a host", []string{"run"}, "", nil, false},
		{"the sibling itself", []string{"run"}, "abc", map[string]string{"PERFGATE_SIBLING": "1"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &IO{Getenv: func(k string) string { return tc.env[k] }, SelfContainer: func() string { return tc.self }}
			if got := needsSibling(s, tc.words); got != tc.want {
				t.Errorf("needsSibling(%q) = %v, want %v", tc.words, got, tc.want)
			}
		})
	}
}
