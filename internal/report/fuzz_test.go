package report

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/judge"
)

// FuzzRejudge feeds `perfgate compare` any bytes as a report: what that
// command does to its file is CheckKind, Read, Rejudge and the summaries,
// all of it here. Whatever the file holds, compare ends within a minute
// with a verdict or one clear refusal (exit 2 on one line); it never
// panics. The target lives in this package, not beside the command in
// internal/cli, because go test -fuzz instruments every package the test
// binary links: the command's (go-git, compose-go, pgx, ...) cost a new
// machine's first CI run minutes of builds.
func FuzzRejudge(f *testing.F) {
	for _, name := range []string{"pass", "regression", "cannot-judge", "v1-paired-pass", "v1-seed-rule"} {
		b, err := os.ReadFile(filepath.Join("testdata", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		// Compact and without the verdict Rejudge recomputes: the fuzzing
		// engine mutates small inputs far faster.
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			f.Fatal(err)
		}
		delete(m, "verdict")
		if b, err = json.Marshal(m); err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version": 1, "kind": "perfgate.load"}`))
	f.Add([]byte(`{"version": 1, "input": {"metrics": [{"id": "p99.x", "base": [1], "head": [2]}]}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "latest.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan compared, 1)
		go func() { c, err := compare(path); done <- compared{c, err} }()
		var code judge.Code
		var err error
		select {
		case c := <-done:
			code, err = c.code, c.err
		case <-time.After(time.Minute):
			t.Fatalf("compare ran over a minute on this report")
		}
		if err != nil {
			if exit.Code(err) != exit.CannotJudge || strings.Contains(strings.TrimSuffix(err.Error(), "\n"), "\n") {
				t.Fatalf("a refusal with exit %d, or on more than one line: %q", exit.Code(err), err)
			}
			return
		}
		if code != judge.Pass && code != judge.Regression && code != judge.CannotJudge {
			t.Fatalf("verdict code %d", code)
		}
	})
}

type compared struct {
	code judge.Code
	err  error
}

// compare is what `perfgate compare --report path --summary ... --json ...`
// does with the file: the new verdict's code, or why it could not judge.
func compare(path string) (judge.Code, error) {
	if err := CheckKind(path); err != nil {
		return 0, err
	}
	r, err := Read(path)
	if err != nil {
		return 0, err
	}
	if err := Rejudge(r, nil, ""); err != nil {
		return 0, err
	}
	if err := Text(io.Discard, r); err != nil {
		return 0, err
	}
	if err := Markdown(io.Discard, r); err != nil {
		return 0, err
	}
	if err := Write(filepath.Join(filepath.Dir(path), "again.json"), r); err != nil {
		return 0, err
	}
	return r.Verdict.Code, nil
}
