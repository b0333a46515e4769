// Command wftool is internal/actiontest's window on actionlint: it lints
// workflow files, lists a workflow's jobs, and evaluates the workflows' own
// expressions for the job-graph simulation (see ../../workflows_test.go).
//
//	wftool lint FILE...        actionlint's findings; exit 1 when any
//	wftool jobs FILE           the workflow's env and jobs as JSON
//	wftool eval                JSON requests on stdin, one answer a line
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/rhysd/actionlint"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: wftool lint FILE... | jobs FILE | eval")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "lint":
		err = lint(os.Args[2:])
	case "jobs":
		err = jobs(os.Args[2])
	case "eval":
		err = serve()
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "wftool:", err)
		os.Exit(1)
	}
}

func lint(files []string) error {
	l, err := actionlint.NewLinter(os.Stdout, &actionlint.LinterOptions{})
	if err != nil {
		return err
	}
	errs, err := l.LintFiles(files, nil)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d finding(s)", len(errs))
	}
	return nil
}

type jobJSON struct {
	ID      string            `json:"id"`
	Needs   []string          `json:"needs"`
	If      string            `json:"if"`
	Env     map[string]string `json:"env"`
	Outputs map[string]string `json:"outputs"`
	Steps   []stepJSON        `json:"steps"`
	// Uses is a called reusable workflow.
	Uses string            `json:"uses,omitempty"`
	With map[string]string `json:"with,omitempty"`
}

type stepJSON struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	If              string            `json:"if"`
	Uses            string            `json:"uses"`
	With            map[string]string `json:"with"`
	Run             string            `json:"run,omitempty"`
	Env             map[string]string `json:"env"`
	ContinueOnError bool              `json:"continue_on_error"`
}

// concurrencyJSON is the workflow's concurrency: its group expression and
// cancel-in-progress, a literal or an expression.
type concurrencyJSON struct {
	Group            string `json:"group"`
	CancelInProgress string `json:"cancel_in_progress"`
}

type workflowJSON struct {
	Env         map[string]string `json:"env"`
	Concurrency *concurrencyJSON  `json:"concurrency,omitempty"`
	Jobs        []jobJSON         `json:"jobs"`
}

func str(s *actionlint.String) string {
	if s == nil {
		return ""
	}
	return s.Value
}

func envOf(e *actionlint.Env) map[string]string {
	m := map[string]string{}
	if e == nil {
		return m
	}
	for _, v := range e.Vars {
		m[v.Name.Value] = v.Value.Value
	}
	return m
}

func jobs(file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	w, errs := actionlint.Parse(b)
	if len(errs) > 0 {
		return fmt.Errorf("%s: %v", file, errs[0])
	}
	out := workflowJSON{Env: envOf(w.Env)}
	if c := w.Concurrency; c != nil {
		out.Concurrency = &concurrencyJSON{Group: str(c.Group)}
		if b := c.CancelInProgress; b != nil {
			out.Concurrency.CancelInProgress = fmt.Sprint(b.Value)
			if b.Expression != nil {
				out.Concurrency.CancelInProgress = b.Expression.Value
			}
		}
	}
	for id, j := range w.Jobs {
		jj := jobJSON{ID: id, If: str(j.If), Env: envOf(j.Env), Outputs: map[string]string{}, With: map[string]string{}}
		for _, n := range j.Needs {
			jj.Needs = append(jj.Needs, n.Value)
		}
		for name, o := range j.Outputs {
			jj.Outputs[name] = str(o.Value)
		}
		if j.WorkflowCall != nil {
			jj.Uses = str(j.WorkflowCall.Uses)
			for name, in := range j.WorkflowCall.Inputs {
				jj.With[name] = str(in.Value)
			}
		}
		for _, s := range j.Steps {
			sj := stepJSON{ID: str(s.ID), Name: str(s.Name), If: str(s.If), With: map[string]string{}, Env: envOf(s.Env)}
			if s.ContinueOnError != nil {
				sj.ContinueOnError = s.ContinueOnError.Value
			}
			if r, ok := s.Exec.(*actionlint.ExecRun); ok {
				sj.Run = str(r.Run)
			}
			if a, ok := s.Exec.(*actionlint.ExecAction); ok {
				sj.Uses = str(a.Uses)
				for name, in := range a.Inputs {
					sj.With[name] = str(in.Value)
				}
			}
			jj.Steps = append(jj.Steps, sj)
		}
		out.Jobs = append(out.Jobs, jj)
	}
	sort.Slice(out.Jobs, func(i, k int) bool { return out.Jobs[i].ID < out.Jobs[k].ID })
	return json.NewEncoder(os.Stdout).Encode(out)
}

// request asks for one evaluation. Mode "if" evaluates a condition as
// GitHub does (success() && (...) when it calls no status function);
// "interpolate" replaces every ${{ }} of a value.
type request struct {
	Mode      string         `json:"mode"`
	Src       string         `json:"src"`
	Ctx       map[string]any `json:"ctx"`
	Cancelled bool           `json:"cancelled"`
	Success   bool           `json:"success"`
	Failure   bool           `json:"failure"`
}

type answer struct {
	Value string `json:"value"`
	Bool  bool   `json:"bool"`
	Error string `json:"error,omitempty"`
}

func serve() error {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	enc := json.NewEncoder(os.Stdout)
	for sc.Scan() {
		var r request
		var a answer
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			a.Error = err.Error()
		} else {
			a = r.answer()
		}
		if err := enc.Encode(a); err != nil {
			return err
		}
	}
	return sc.Err()
}

func (r request) answer() answer {
	env := exprEnv{ctx: lower(r.Ctx), cancelled: r.Cancelled, success: r.Success, failure: r.Failure}
	switch r.Mode {
	case "if":
		b, err := condition(r.Src, env)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Bool: b, Value: strconv.FormatBool(b)}
	case "interpolate":
		s, err := interpolate(r.Src, env)
		if err != nil {
			return answer{Error: err.Error()}
		}
		return answer{Value: s, Bool: s != ""}
	}
	return answer{Error: "mode " + r.Mode + ": want if or interpolate"}
}

// lower makes context keys case-insensitive, as GitHub's are.
func lower(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = lower(sub)
		}
		out[strings.ToLower(k)] = v
	}
	return out
}
