package actiontest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/cli"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
)

// Every workflow the project ships passes actionlint.
func TestWorkflowsLint(t *testing.T) {
	root := moduleRoot(t)
	files := []string{
		filepath.Join(root, ".github", "workflows", "perf.yml"),
		filepath.Join(root, "workflows", "perf.yml"),
		filepath.Join(root, "workflows", "release.yml"),
	}
	out, err := execOutput(wftool(t), append([]string{"lint"}, files...)...)
	if err != nil {
		t.Fatalf("actionlint: %v\n%s", err, out)
	}
}

// The templates call the reusable workflow, the perf template on every
// event the gate serves with a concurrency group per pull request, and the
// release template for the release's tag.
func TestWorkflowTemplates(t *testing.T) {
	root := moduleRoot(t)
	perf, err := os.ReadFile(filepath.Join(root, "workflows", "perf.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pull_request:", "merge_group:", "push:", "workflow_dispatch:", "release:",
		"concurrency:", "github.event.pull_request.number", "uses: perfgate/perfgate/.github/workflows/perf.yml@v1"} {
		if !strings.Contains(string(perf), want) {
			t.Errorf("workflows/perf.yml lacks %q", want)
		}
	}
	rel := readWorkflow(t, filepath.Join(root, "workflows", "release.yml"))
	var draft *wfJob
	for i, j := range rel.Jobs {
		if j.ID == "perf" && (j.Uses != "perfgate/perfgate/.github/workflows/perf.yml@v1" || j.With["event"] != "release") {
			t.Errorf("release.yml's perf job %+v does not call the reusable workflow for the release", j)
		}
		if j.ID == "draft" {
			draft = &rel.Jobs[i]
		}
	}
	if draft == nil {
		t.Fatal("release.yml has no draft job")
	}
	// The draft needs the release-notes line, which release-note refuses
	// (exit 2, the step fails) when the gate named no base.
	note, create := -1, -1
	for i, s := range draft.Steps {
		if s.With["command"] == "release-note" {
			note = i
		}
		if strings.Contains(s.Name, "Draft") {
			create = i
		}
	}
	if note < 0 || create < note || draft.Steps[note].ContinueOnError || draft.Steps[create].If != "" {
		t.Errorf("the draft job must run release-note, failing on refusal, before it drafts: %+v", draft.Steps)
	}
}

// The README's test command is the one .ci/run runs.
func TestCIRunsTheReadmeTestCommand(t *testing.T) {
	root := moduleRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(readme), "```sh\n")
	if !ok {
		t.Fatal("README.md has no sh block")
	}
	lines := strings.Split(block, "\n")
	if lines[0] != "go run ./cmd/perfgate demo" {
		t.Errorf("the README's first command is %q, want the demo", lines[0])
	}
	test := lines[1]
	if test != "bash .ci/test" {
		t.Errorf("the README's test command is %q, want bash .ci/test", test)
	}
	script, err := os.ReadFile(filepath.Join(root, ".ci", "test"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"gofmt -l", "go vet ./...", "go tool staticcheck ./...", "go test -count=1 -p 4 -timeout 20m $plain",
		"go test -race -count=1 -timeout 20m $race", "go test -race -count=1 -timeout 20m ./internal/load/... ./internal/pairs/...", "./internal/pairs/...", "./internal/arms/...", `grep -vxF "$raced"`} {
		if !strings.Contains(string(script), want) {
			t.Errorf(".ci/test lacks %q", want)
		}
	}
	fuzz, err := os.ReadFile(filepath.Join(root, ".ci", "fuzz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"-fuzz", "-fuzztime 5s"} {
		if !strings.Contains(string(fuzz), want) {
			t.Errorf(".ci/fuzz lacks %q", want)
		}
	}
	// Every fuzz target in the tree is run by .ci/fuzz, so a new one
	// cannot be forgotten.
	targets, err := exec.Command("grep", "-rhoE", "--include=*_test.go", "--exclude-dir=testdata", `^func (Fuzz[A-Za-z0-9_]+)`, filepath.Join(root, "internal")).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(strings.ReplaceAll(string(targets), "func ", "")) {
		if !strings.Contains(string(fuzz), " "+f+"\n") {
			t.Errorf(".ci/fuzz does not run the fuzz target %s", f)
		}
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), "bash .ci/fuzz") {
		t.Error(".ci/run does not run the fuzz targets (bash .ci/fuzz)")
	}
	if !strings.Contains(string(readme), "bash .ci/fuzz") {
		t.Error("the README does not say that CI runs bash .ci/fuzz after the tests")
	}
	if !strings.Contains(string(readme), "go test -short ./...") {
		t.Error("the README does not name the short tier, go test -short ./...")
	}
	if !slices.Contains(strings.Split(string(ci), "\n"), test) {
		t.Errorf(".ci/run does not run the README's test command %q", test)
	}
}

// attemptFake is how one attempt job ends in a simulated run.
type attemptFake struct {
	kind  string // "exit", "timeout", "lost" (runner shut down), "cancel" (the workflow cancelled)
	code  int
	model string
}

const (
	stallModel = "AMD EPYC 9V74 80-Core Processor"
	otherModel = "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"
)

func exited(code int, model string) attemptFake {
	return attemptFake{kind: "exit", code: code, model: model}
}

var (
	timedOut          = attemptFake{kind: "timeout"}
	runnerLost        = attemptFake{kind: "lost"}
	workflowCancelled = attemptFake{kind: "cancel"}
)

// The reusable workflow's job graph over every row of the retry rules: the
// fake attempts' outcomes go through the workflow's own if: expressions,
// `perfgate attempts next` as its step calls it, and `perfgate verdict` as
// the verdict job calls it.
func TestWorkflowJobGraph(t *testing.T) {
	w := readWorkflow(t, filepath.Join(moduleRoot(t), ".github", "workflows", "perf.yml"))
	e := newEvaluator(t)
	tests := []struct {
		name    string
		fakes   []attemptFake
		ran     []string // attempt jobs that ran
		verdict int      // -1: the verdict job is skipped
	}{
		{"a pass is final", []attemptFake{exited(0, otherModel)}, []string{"attempt-1"}, exit.Pass},
		{"a regression on another model is final", []attemptFake{exited(1, otherModel)}, []string{"attempt-1"}, exit.Regression},
		{"a regression on a stall-prone model retries", []attemptFake{exited(1, stallModel), exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"stall-prone regressions stop after two retries", []attemptFake{exited(1, stallModel), exited(1, stallModel), exited(1, stallModel)}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.Regression},
		{"cannot judge retries on any model", []attemptFake{exited(2, otherModel), exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"cannot judge, then a regression on another model", []attemptFake{exited(2, stallModel), exited(1, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Regression},
		{"three cannot-judge attempts", []attemptFake{exited(2, otherModel), exited(2, otherModel), exited(2, otherModel)}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.CannotJudge},
		{"a job time limit retries", []attemptFake{timedOut, exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"a runner that shut down retries", []attemptFake{runnerLost, exited(1, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Regression},
		{"the last attempt that ran decides", []attemptFake{exited(2, otherModel), timedOut, exited(0, otherModel)}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.Pass},
		{"no attempt ran to an exit code", []attemptFake{timedOut, runnerLost, timedOut}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.CannotJudge},
		{"a crash code counts as cannot judge", []attemptFake{exited(137, otherModel), exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"a cancelled workflow retries nothing and skips the verdict", []attemptFake{workflowCancelled}, []string{"attempt-1"}, -1},
		{"cancelled during a retry", []attemptFake{exited(2, otherModel), workflowCancelled}, []string{"attempt-1", "attempt-2"}, -1},
		// The build job failed (a refused contract, a failed build): no
		// attempt runs and the verdict cannot judge.
		{"the build failed", nil, nil, exit.CannotJudge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ran, code, summary := simulate(t, w, e, tc.fakes, stallModel)
			if !slices.Equal(ran, tc.ran) {
				t.Errorf("attempt jobs that ran: %v, want %v", ran, tc.ran)
			}
			if code != tc.verdict {
				t.Errorf("verdict %d, want %d\n%s", code, tc.verdict, summary)
			}
			if tc.verdict >= 0 {
				for _, n := range tc.ran {
					if !strings.Contains(summary, "| "+strings.TrimPrefix(n, "attempt-")+" |") {
						t.Errorf("the verdict's table lacks %s:\n%s", n, summary)
					}
				}
			}
		})
	}
}

// simulate runs the reusable workflow's jobs in order over fake attempt
// outcomes and returns the attempt jobs that ran, the verdict job's exit
// code (-1 when it was skipped) and its summary.
func simulate(t *testing.T, w *workflow, e *evaluator, fakes []attemptFake, stallProne string) ([]string, int, string) {
	t.Helper()
	inputs := map[string]any{"plan": "", "args": "", "stall-prone": stallProne, "event": "", "tag": "", "runs-on": "ubuntu-latest"}
	wfEnv := map[string]string{}
	for k, v := range w.Env {
		wfEnv[k] = e.ask(evalRequest{Mode: "interpolate", Src: v, Ctx: map[string]any{"inputs": inputs}}).Value
	}
	reports := t.TempDir()
	needs := map[string]any{}
	results := map[string]string{}
	cancelled := false
	var ran []string
	verdict, summary := -1, ""
	for _, job := range topo(t, w.Jobs) {
		jobNeeds := map[string]any{}
		success, failure := true, false
		for _, n := range job.Needs {
			jobNeeds[n] = needs[n]
			success = success && results[n] == "success"
			failure = failure || results[n] == "failure"
		}
		ctx := map[string]any{"inputs": inputs, "needs": jobNeeds}
		if !e.ask(evalRequest{Mode: "if", Src: job.If, Ctx: ctx, Cancelled: cancelled, Success: success, Failure: failure}).Bool {
			results[job.ID] = "skipped"
			needs[job.ID] = map[string]any{"result": "skipped", "outputs": map[string]any{}}
			continue
		}
		result, outputs := "success", map[string]any{}
		switch {
		case job.ID == "build":
			if len(fakes) == 0 {
				result = "failure"
			}
		case strings.HasPrefix(job.ID, "attempt-"):
			n, _ := strconv.Atoi(strings.TrimPrefix(job.ID, "attempt-"))
			ran = append(ran, job.ID)
			if n > len(fakes) {
				t.Fatalf("%s ran but the row gives it no outcome", job.ID)
			}
			result, outputs, cancelled = runAttempt(t, e, job, n, fakes[n-1], ctx, wfEnv, reports, cancelled)
		case job.ID == "verdict":
			verdict, summary = runVerdictJob(t, e, job, ctx, wfEnv, reports)
		default:
			t.Fatalf("unexpected job %s", job.ID)
		}
		results[job.ID] = result
		needs[job.ID] = map[string]any{"result": result, "outputs": outputs}
	}
	return ran, verdict, summary
}

// runAttempt plays one attempt job: the gate step's exit code, then the
// "Retry or final" step through the real CLI, then the job's outputs.
func runAttempt(t *testing.T, e *evaluator, job wfJob, n int, f attemptFake, ctx map[string]any, wfEnv map[string]string, reports string, cancelled bool) (string, map[string]any, bool) {
	t.Helper()
	steps := map[string]any{}
	jobOutputs := func() map[string]any {
		out := map[string]any{}
		c := map[string]any{"steps": steps, "inputs": ctx["inputs"]}
		for name, v := range job.Outputs {
			out[name] = e.ask(evalRequest{Mode: "interpolate", Src: v, Ctx: c}).Value
		}
		return out
	}
	switch f.kind {
	case "timeout":
		return "cancelled", jobOutputs(), cancelled
	case "lost":
		return "failure", map[string]any{}, cancelled
	case "cancel":
		return "cancelled", jobOutputs(), true
	}
	gate, next := stepByID(t, job, "gate"), stepByID(t, job, "next")
	if gate.With["command"] != "run" || !gate.ContinueOnError {
		t.Fatalf("%s's gate step must run `run` with continue-on-error, so a judged attempt's job succeeds with its outputs: %+v", job.ID, gate)
	}
	steps["gate"] = map[string]any{"outputs": map[string]any{"exit-code": strconv.Itoa(f.code), "verdict": ""}, "outcome": "failure", "conclusion": "success"}
	sc := map[string]any{"steps": steps, "inputs": ctx["inputs"], "needs": ctx["needs"]}
	if !e.ask(evalRequest{Mode: "if", Src: next.If, Ctx: sc, Cancelled: cancelled, Success: true}).Bool {
		t.Fatalf("%s's Retry or final step did not run after exit code %d", job.ID, f.code)
	}
	if next.With["command"] != "attempts next" {
		t.Fatalf("%s's next step runs %q, want attempts next", job.ID, next.With["command"])
	}
	args, err := contract.SplitWords(e.ask(evalRequest{Mode: "interpolate", Src: next.With["args"], Ctx: sc}).Value)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(args, " "), "--attempt "+strconv.Itoa(n)+" ") {
		t.Fatalf("%s asks about the wrong attempt: %q", job.ID, args)
	}
	// The runner's CPU model is read from /proc/cpuinfo on a real runner;
	// here the row gives it. The record lands where the upload takes it.
	record := filepath.Join(reports, "perf-report-attempt-"+strconv.Itoa(n), "perf-run", "attempt.json")
	args = append(args, "--cpu-model", f.model, "--record", record)
	env := map[string]string{"GITHUB_OUTPUT": filepath.Join(t.TempDir(), "output")}
	for k, v := range wfEnv {
		env[k] = v
	}
	for k, v := range job.Env {
		env[k] = v
	}
	os.WriteFile(env["GITHUB_OUTPUT"], nil, 0o644)
	if _, err := runPerfgate(append([]string{"attempts", "next"}, args...), env); err != nil {
		t.Fatalf("perfgate attempts next %q: %v", args, err)
	}
	steps["next"] = map[string]any{"outputs": readOutputs(t, env["GITHUB_OUTPUT"])}
	return "success", jobOutputs(), cancelled
}

func runVerdictJob(t *testing.T, e *evaluator, job wfJob, ctx map[string]any, wfEnv map[string]string, reports string) (int, string) {
	t.Helper()
	step := stepByID(t, job, "verdict")
	if step.With["command"] != "verdict" {
		t.Fatalf("the verdict step runs %q", step.With["command"])
	}
	args, err := contract.SplitWords(e.ask(evalRequest{Mode: "interpolate", Src: step.With["args"], Ctx: ctx}).Value)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "perf-verdict")
	// The downloaded artifacts are where the attempts' records went.
	args = append(args, "--reports", reports, "--out", out)
	_, err = runPerfgate(append([]string{"verdict"}, args...), wfEnv)
	md, _ := os.ReadFile(filepath.Join(out, "summary.md"))
	return exit.Code(err), string(md)
}

func runPerfgate(args []string, env map[string]string) (string, error) {
	var out, errb bytes.Buffer
	err := cli.RunIO(context.Background(), args, &cli.IO{Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }})
	return out.String() + errb.String(), err
}

func stepByID(t *testing.T, job wfJob, id string) wfStep {
	t.Helper()
	for _, s := range job.Steps {
		if s.ID == id {
			return s
		}
	}
	t.Fatalf("job %s has no step %q", job.ID, id)
	return wfStep{}
}

// readOutputs parses a GITHUB_OUTPUT file (name<<delimiter blocks and
// name=value lines).
func readOutputs(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		if name, delim, ok := strings.Cut(lines[i], "<<"); ok {
			var val []string
			for i++; i < len(lines) && lines[i] != delim; i++ {
				val = append(val, lines[i])
			}
			out[name] = strings.Join(val, "\n")
		} else if name, val, ok := strings.Cut(lines[i], "="); ok {
			out[name] = val
		}
	}
	return out
}

// topo orders jobs so each comes after the jobs it needs.
func topo(t *testing.T, jobs []wfJob) []wfJob {
	t.Helper()
	done := map[string]bool{}
	var out []wfJob
	for len(out) < len(jobs) {
		progress := false
		for _, j := range jobs {
			if done[j.ID] {
				continue
			}
			ready := true
			for _, n := range j.Needs {
				ready = ready && done[n]
			}
			if ready {
				done[j.ID], progress = true, true
				out = append(out, j)
			}
		}
		if !progress {
			t.Fatal("the jobs' needs form a cycle")
		}
	}
	return out
}

// The full workflow examples of docs/action.md pass actionlint too.
func TestDocsWorkflowsLint(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(moduleRoot(t), "docs", "action.md"))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, block := range strings.Split(string(doc), "```yaml\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if !strings.Contains(body, "\njobs:") {
			continue
		}
		f := filepath.Join(t.TempDir(), "example-"+strconv.Itoa(i)+".yml")
		if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 2 {
		t.Fatalf("docs/action.md shows %d full workflows, want both build modes", len(files))
	}
	if out, err := execOutput(wftool(t), append([]string{"lint"}, files...)...); err != nil {
		t.Fatalf("actionlint on docs/action.md's workflows: %v\n%s", err, out)
	}
}
