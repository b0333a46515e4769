package actiontest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/cli"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict"
)

// Every workflow the project ships passes actionlint.
func TestWorkflowsLint(t *testing.T) {
	root := moduleRoot(t)
	files := []string{
		filepath.Join(root, ".github", "workflows", "perf.yml"),
		filepath.Join(root, "workflows", "perf.yml"),
		filepath.Join(root, "workflows", "release.yml"),
		filepath.Join(root, "workflows", "perf-relay.yml"),
		filepath.Join(root, "workflows", "capacity.yml"),
		filepath.Join(root, ".github", "workflows", "release-image.yml"),
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
	jobs := map[string]wfJob{}
	for _, j := range rel.Jobs {
		jobs[j.ID] = j
	}
	if j := jobs["perf"]; j.Uses != "perfgate/perfgate/.github/workflows/perf.yml@v1" || j.With["event"] != "release" || !slices.Contains(j.Needs, "draft") {
		t.Errorf("release.yml's perf job %+v must call the reusable workflow for the release, after the draft exists (the service writes its line into it)", j)
	}
	draft, note := jobs["draft"], jobs["note"]
	if len(draft.Steps) == 0 || !strings.Contains(draft.Steps[0].Run, "gh release create") {
		t.Errorf("release.yml's draft job does not draft the release: %+v", draft.Steps)
	}
	if !slices.Contains(note.Needs, "perf") {
		t.Fatalf("release.yml's note job must come after the gate: %+v", note)
	}
	// The line comes from release-note, which refuses (exit 2, the step
	// fails) when the gate named no base, and goes between the service's
	// own markers, replacing an earlier one.
	at, edit := -1, -1
	for i, s := range note.Steps {
		if s.With["command"] == "release-note" {
			at = i
		}
		if strings.Contains(s.Run, "gh release edit") {
			edit = i
		}
		if strings.HasPrefix(s.Uses, "actions/download-artifact@") && (s.With["name"] != "${{ needs.perf.outputs.arms }}" || s.With["run-id"] == "") {
			t.Errorf("the note job reads the arms as %q (run-id %q), want the gate's arms output through the REST API", s.With["name"], s.With["run-id"])
		}
	}
	if at < 0 || edit < at || note.Steps[at].ContinueOnError || note.Steps[edit].If != "" ||
		!strings.Contains(note.Steps[edit].Run, "<!-- perfgate:release-line -->") || !strings.Contains(note.Steps[edit].Run, "<!-- /perfgate:release-line -->") {
		t.Errorf("the note job must run release-note, failing on refusal, then write the line between perfgate's markers: %+v", note.Steps)
	}
}

// The template's concurrency: the runs of one pull request share a group
// and cancel the one before; three quick pushes to the default branch,
// merge groups and releases each get a group of their own, so none is left
// pending for a newer one to cancel.
func TestTemplateConcurrency(t *testing.T) {
	w := readWorkflow(t, filepath.Join(moduleRoot(t), "workflows", "perf.yml"))
	if w.Concurrency == nil {
		t.Fatal("workflows/perf.yml has no concurrency")
	}
	e := newEvaluator(t)
	group := func(event string, pr, runID int) (string, string) {
		gh := map[string]any{"event_name": event, "run_id": strconv.Itoa(runID), "ref": "refs/heads/main", "event": map[string]any{}}
		if pr > 0 {
			gh["event"] = map[string]any{"pull_request": map[string]any{"number": pr}}
		}
		c := map[string]any{"github": gh}
		return e.ask(evalRequest{Mode: "interpolate", Src: w.Concurrency.Group, Ctx: c}).Value,
			e.ask(evalRequest{Mode: "interpolate", Src: w.Concurrency.CancelInProgress, Ctx: c}).Value
	}
	pushes := map[string]bool{}
	for id := 1; id <= 3; id++ {
		g, cancel := group("push", 0, 100+id)
		pushes[g] = true
		if cancel != "false" {
			t.Errorf("a push's run cancels the one in progress (cancel-in-progress %q)", cancel)
		}
	}
	if len(pushes) != 3 {
		t.Errorf("three pushes share groups %v: the third would cancel the pending second", pushes)
	}
	a, cancel := group("pull_request", 7, 201)
	b, _ := group("pull_request", 7, 202)
	c, _ := group("pull_request", 8, 203)
	if a != b || a == c || cancel != "true" {
		t.Errorf("pull requests' groups %q %q %q (cancel %q): want one group per pull request, cancelling", a, b, c, cancel)
	}
	if m, _ := group("merge_group", 0, 301); m == a || pushes[m] {
		t.Errorf("a merge group's run shares group %q", m)
	}
}

// action.yml names the image release-image.yml pushes for the version in
// VERSION, so a release's jobs pull the image of that release; the
// workflow refuses a tag that is not VERSION or an action.yml naming
// another image, and stamps the version into the image.
func TestReleaseImageVersion(t *testing.T) {
	root := moduleRoot(t)
	version, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(version))
	if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(v) {
		t.Fatalf("VERSION holds %q, want a release tag like v1.2.3", v)
	}
	action, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^  image: (\S+)$`).FindSubmatch(action)
	if m == nil {
		t.Fatal("action.yml names no runs.image")
	}
	if want := "docker://ghcr.io/perfgate/perfgate:" + v; string(m[1]) != want {
		t.Errorf("action.yml's image is %s, want %s (VERSION %s): a release commit sets both", m[1], want, v)
	}
	wf, err := os.ReadFile(filepath.Join(root, ".github", "workflows", "release-image.yml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`tags: ["v*"]`, `version=$(cat VERSION)`, `want="image: docker://$IMAGE:$TAG"`,
		"IMAGE: ghcr.io/${{ github.repository }}", "build-args: VERSION=${{ env.TAG }}", "push: true", "packages: write"} {
		if !strings.Contains(string(wf), want) {
			t.Errorf("release-image.yml lacks %q", want)
		}
	}
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Built from the Dockerfile (the fallback) without a build argument,
	// the image still says its version: the VERSION file's.
	if !strings.Contains(string(df), "cat VERSION") {
		t.Error("the Dockerfile does not read the VERSION file when no VERSION build argument is given")
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
	// The test binaries are linked once and run by .ci/gotest, as go test
	// runs them (TestGotestRunsBinariesAsGoTest).
	for _, want := range []string{"gofmt -l", "go vet ./...", "go tool staticcheck ./...",
		`bash .ci/gotest link "$tests/plain" -- ./...`, `bash .ci/gotest link "$tests/race" -race -- ./internal/load/... ./internal/pairs/... $race`,
		`bash .ci/gotest run "$tests/plain" 4 -test.timeout=20m '-test.skip=^TestMeasured' -- $plain`,
		`nice -n 5 bash .ci/gotest run "$tests/race" 4 -test.timeout=20m '-test.skip=^TestMeasured' -- $race`,
		`bash .ci/gotest run "$tests/race" 3 -test.timeout=20m '-test.skip=^TestMeasured' -- ./internal/load/... ./internal/pairs/...`,
		`bash .ci/gotest run "$tests/plain" 1 -test.timeout=20m "-test.run=$alone" -- ./internal/demo`,
		`PERFGATE_TEST_GATE_SLOTS=$demo_slots setsid bash .ci/gotest run "$tests/plain" 1 -test.v -test.timeout=20m "-test.run=$alone" -- ./internal/demo`,
		`bash .ci/gotest run "$tests/plain" 8 -test.parallel=4 -test.timeout=45m '-test.run=^TestMeasured' "-test.skip=$alone" -- $measured`,
		"grep -l '^func TestMeasured'", "./internal/pairs/...", "./internal/arms/...", `grep -vxF "$raced"`} {
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
	// The line names the target's package too: a target whose file moved
	// would otherwise be fuzzed where it no longer is.
	targets, err := exec.Command("grep", "-roE", "--include=*_test.go", "--exclude-dir=testdata", `^func (Fuzz[A-Za-z0-9_]+)`, filepath.Join(root, "internal")).Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(targets)), "\n") {
		file, fn, _ := strings.Cut(line, ":func ")
		rel, err := filepath.Rel(root, filepath.Dir(file))
		if err != nil {
			t.Fatal(err)
		}
		if want := "./" + filepath.ToSlash(rel) + " " + fn + "\n"; !strings.Contains(string(fuzz), want) {
			t.Errorf(".ci/fuzz does not run the fuzz target %s as %q", fn, strings.TrimSpace(want))
		}
	}
	// .ci/test runs the fuzz targets: beside the whole-pipeline demo where
	// it runs alone, after the measured tests elsewhere.
	scriptLines := strings.Split(string(script), "\n")
	for _, want := range []string{`  setsid bash .ci/fuzz --beside >"$bin/fuzz.log" 2>&1 &`, "  bash .ci/fuzz || status=1"} {
		if !slices.Contains(scriptLines, want) {
			t.Errorf(".ci/test does not run the fuzz targets as %q", want)
		}
	}
	if !strings.Contains(string(readme), "`.ci/fuzz`") {
		t.Error("the README does not say that the test command runs the fuzz targets (.ci/fuzz)")
	}
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
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
	// timedOut reached the job's time limit before the gate step wrote
	// anything; timedOutAfterExit's gate stopped on the runner's SIGINT
	// within its 7.5 s and wrote exit code 2, but "Retry or final" never
	// ran (the job was being cancelled).
	timedOut          = attemptFake{kind: "timeout"}
	timedOutAfterExit = attemptFake{kind: "timeout-exit"}
	runnerLost        = attemptFake{kind: "lost"}
	workflowCancelled = attemptFake{kind: "cancel"}
)

// verdictFailedOnCancel is the verdict job's code in the table below when
// it ran on a cancelled workflow and failed there (a skipped required job
// would pass).
const verdictFailedOnCancel = -2

// The reusable workflow's job graph over every row of the retry rules: the
// fake attempts' outcomes go through the workflow's own if: expressions,
// `perfgate attempts next` as its step calls it, and `perfgate verdict` as
// the verdict job calls it.
func TestWorkflowJobGraph(t *testing.T) {
	t.Parallel() // wftool's processes, beside the others
	w := readWorkflow(t, filepath.Join(moduleRoot(t), ".github", "workflows", "perf.yml"))
	e := newEvaluator(t)
	tests := []struct {
		name    string
		fakes   []attemptFake
		ran     []string // attempt jobs that ran
		verdict int      // the verdict job's exit code, or verdictFailedOnCancel
	}{
		{"a pass is final", []attemptFake{exited(0, otherModel)}, []string{"attempt-1"}, exit.Pass},
		{"a regression on another model is final", []attemptFake{exited(1, otherModel)}, []string{"attempt-1"}, exit.Regression},
		{"a regression on a stall-prone model retries", []attemptFake{exited(1, stallModel), exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"stall-prone regressions stop after two retries", []attemptFake{exited(1, stallModel), exited(1, stallModel), exited(1, stallModel)}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.Regression},
		{"cannot judge retries on any model", []attemptFake{exited(2, otherModel), exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"cannot judge, then a regression on another model", []attemptFake{exited(2, stallModel), exited(1, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Regression},
		{"three cannot-judge attempts", []attemptFake{exited(2, otherModel), exited(2, otherModel), exited(2, otherModel)}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.CannotJudge},
		{"a job time limit retries", []attemptFake{timedOut, exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"a time limit after the gate wrote exit 2 retries", []attemptFake{timedOutAfterExit, exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"a runner that shut down retries", []attemptFake{runnerLost, exited(1, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Regression},
		{"the last attempt that ran decides", []attemptFake{exited(2, otherModel), timedOut, exited(0, otherModel)}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.Pass},
		{"no attempt ran to an exit code", []attemptFake{timedOut, runnerLost, timedOut}, []string{"attempt-1", "attempt-2", "attempt-3"}, exit.CannotJudge},
		{"a crash code counts as cannot judge", []attemptFake{exited(137, otherModel), exited(0, otherModel)}, []string{"attempt-1", "attempt-2"}, exit.Pass},
		{"a cancelled workflow retries nothing and its verdict job fails", []attemptFake{workflowCancelled}, []string{"attempt-1"}, verdictFailedOnCancel},
		{"cancelled during a retry", []attemptFake{exited(2, otherModel), workflowCancelled}, []string{"attempt-1", "attempt-2"}, verdictFailedOnCancel},
		// The build job failed (a refused contract, a failed build): no
		// attempt runs and the verdict cannot judge.
		{"the build failed", nil, nil, exit.CannotJudge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ran, code, summary := simulate(t, w, e, tc.fakes, stallModel, 1)
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
// outcomes, as run attempt runAttempt of the workflow run, and returns the
// attempt jobs that ran, the verdict job's exit code (verdictFailedOnCancel
// when it failed on a cancel) and its summary. Shell steps the outcome
// depends on (the names of the gate and its artifacts) run for real in
// bash.
func simulate(t *testing.T, w *workflow, e *evaluator, fakes []attemptFake, stallProne string, runAttempt int) ([]string, int, string) {
	t.Helper()
	inputs := map[string]any{"plan": "", "name": "", "args": "", "stall-prone": stallProne, "event": "", "tag": "", "runs-on": "ubuntu-latest"}
	github := map[string]any{"run_id": "4242", "run_attempt": strconv.Itoa(runAttempt), "token": "ghs_fake"}
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
		ctx := map[string]any{"inputs": inputs, "needs": jobNeeds, "github": github}
		if !e.ask(evalRequest{Mode: "if", Src: job.If, Ctx: ctx, Cancelled: cancelled, Success: success, Failure: failure}).Bool {
			results[job.ID] = "skipped"
			needs[job.ID] = map[string]any{"result": "skipped", "outputs": map[string]any{}}
			continue
		}
		result, outputs := "success", map[string]any{}
		switch {
		case job.ID == "build":
			outputs = runBuild(t, e, job, ctx, runAttempt)
			if len(fakes) == 0 {
				result = "failure"
			}
		case strings.HasPrefix(job.ID, "attempt-"):
			n, _ := strconv.Atoi(strings.TrimPrefix(job.ID, "attempt-"))
			ran = append(ran, job.ID)
			if n > len(fakes) {
				t.Fatalf("%s ran but the row gives it no outcome", job.ID)
			}
			result, outputs, cancelled = runAttemptJob(t, e, job, n, fakes[n-1], ctx, wfEnv, reports, cancelled, runAttempt)
		case job.ID == "verdict":
			verdict, summary = runVerdictJob(t, e, job, ctx, wfEnv, reports, cancelled)
		default:
			t.Fatalf("unexpected job %s", job.ID)
		}
		results[job.ID] = result
		needs[job.ID] = map[string]any{"result": result, "outputs": outputs}
	}
	return ran, verdict, summary
}

// runShell runs a run: step in bash as the runner would: its script and
// env interpolated, GITHUB_OUTPUT a file, GITHUB_RUN_ATTEMPT set; it
// returns the outputs the step wrote.
func runShell(t *testing.T, e *evaluator, step wfStep, ctx map[string]any, runAttempt int) map[string]any {
	t.Helper()
	out := filepath.Join(t.TempDir(), "output")
	os.WriteFile(out, nil, 0o644)
	cmd := exec.Command("bash", "-e", "-c", e.ask(evalRequest{Mode: "interpolate", Src: step.Run, Ctx: ctx}).Value)
	cmd.Env = append(os.Environ(), "GITHUB_OUTPUT="+out, "GITHUB_RUN_ATTEMPT="+strconv.Itoa(runAttempt))
	for k, v := range step.Env {
		cmd.Env = append(cmd.Env, k+"="+e.ask(evalRequest{Mode: "interpolate", Src: v, Ctx: ctx}).Value)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("step %q: %v\n%s", step.Name, err, b)
	}
	return readOutputs(t, out)
}

// jobOutputsOf evaluates a job's outputs over its steps' outputs.
func jobOutputsOf(e *evaluator, job wfJob, steps map[string]any, ctx map[string]any) map[string]any {
	out := map[string]any{}
	c := map[string]any{"steps": steps, "inputs": ctx["inputs"], "needs": ctx["needs"], "github": ctx["github"]}
	for name, v := range job.Outputs {
		out[name] = e.ask(evalRequest{Mode: "interpolate", Src: v, Ctx: c}).Value
	}
	return out
}

// runBuild plays the build job: its naming step for real, the upload of
// the arms under the name it made.
func runBuild(t *testing.T, e *evaluator, job wfJob, ctx map[string]any, runAttempt int) map[string]any {
	t.Helper()
	names := stepByID(t, job, "names")
	steps := map[string]any{"names": map[string]any{"outputs": runShell(t, e, names, ctx, runAttempt)}}
	outputs := jobOutputsOf(e, job, steps, ctx)
	upload := stepUsing(t, job, "actions/upload-artifact@")
	sc := map[string]any{"steps": steps, "inputs": ctx["inputs"], "github": ctx["github"]}
	if got := e.ask(evalRequest{Mode: "interpolate", Src: upload.With["name"], Ctx: sc}).Value; got != outputs["arms"] || got == "" {
		t.Fatalf("the build uploads the arms as %q, but passes on %q", got, outputs["arms"])
	}
	return outputs
}

// runAttemptJob plays one attempt job: the arms read by the name the build
// passed on, the gate step's exit code, then the "Retry or final" step
// through the real CLI, then the report's name and the job's outputs.
func runAttemptJob(t *testing.T, e *evaluator, job wfJob, n int, f attemptFake, ctx map[string]any, wfEnv map[string]string, reports string, cancelled bool, runAttempt int) (string, map[string]any, bool) {
	t.Helper()
	steps := map[string]any{}
	sc := func() map[string]any {
		return map[string]any{"steps": steps, "inputs": ctx["inputs"], "needs": ctx["needs"], "github": ctx["github"]}
	}
	// The arms come from the build's upload, through the REST API (run-id
	// and a token), which sees every run attempt's artifacts: a re-run of
	// this job alone finds what an earlier attempt's build uploaded.
	dl := stepUsing(t, job, "actions/download-artifact@")
	arms := ctx["needs"].(map[string]any)["build"].(map[string]any)["outputs"].(map[string]any)["arms"]
	if got := e.ask(evalRequest{Mode: "interpolate", Src: dl.With["name"], Ctx: sc()}).Value; got != arms {
		t.Fatalf("%s downloads the arms as %q, the build uploaded %q", job.ID, got, arms)
	}
	if dl.With["run-id"] == "" || dl.With["github-token"] == "" {
		t.Fatalf("%s reads the arms without run-id and github-token: a re-run of it alone sees only its own run attempt's artifacts", job.ID)
	}
	// The report's name, then its upload: they run whatever the attempt's
	// end (always()).
	nameReport := func() {
		step := stepByID(t, job, "report")
		if !e.ask(evalRequest{Mode: "if", Src: step.If, Ctx: sc(), Cancelled: true}).Bool {
			t.Fatalf("%s's report step does not run when the job is cancelled (a time limit)", job.ID)
		}
		steps["report"] = map[string]any{"outputs": runShell(t, e, step, sc(), runAttempt)}
	}
	switch f.kind {
	case "timeout":
		nameReport()
		return "cancelled", jobOutputsOf(e, job, steps, ctx), cancelled
	case "timeout-exit":
		steps["gate"] = map[string]any{"outputs": map[string]any{"exit-code": "2", "verdict": "cannot-judge"}, "outcome": "failure", "conclusion": "success"}
		if e.ask(evalRequest{Mode: "if", Src: stepByID(t, job, "next").If, Ctx: sc(), Cancelled: true}).Bool {
			t.Fatalf("%s's Retry or final step would run in a job being cancelled", job.ID)
		}
		nameReport()
		return "cancelled", jobOutputsOf(e, job, steps, ctx), cancelled
	case "lost":
		return "failure", map[string]any{}, cancelled
	case "cancel":
		nameReport()
		return "cancelled", jobOutputsOf(e, job, steps, ctx), true
	}
	gate, next := stepByID(t, job, "gate"), stepByID(t, job, "next")
	if gate.With["command"] != "run" || !gate.ContinueOnError {
		t.Fatalf("%s's gate step must run `run` with continue-on-error, so a judged attempt's job succeeds with its outputs: %+v", job.ID, gate)
	}
	steps["gate"] = map[string]any{"outputs": map[string]any{"exit-code": strconv.Itoa(f.code), "verdict": ""}, "outcome": "failure", "conclusion": "success"}
	if !e.ask(evalRequest{Mode: "if", Src: next.If, Ctx: sc(), Cancelled: cancelled, Success: true}).Bool {
		t.Fatalf("%s's Retry or final step did not run after exit code %d", job.ID, f.code)
	}
	if next.With["command"] != "attempts next" {
		t.Fatalf("%s's next step runs %q, want attempts next", job.ID, next.With["command"])
	}
	args, err := contract.SplitWords(e.ask(evalRequest{Mode: "interpolate", Src: next.With["args"], Ctx: sc()}).Value)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(args, " "), "--attempt "+strconv.Itoa(n)+" ") {
		t.Fatalf("%s asks about the wrong attempt: %q", job.ID, args)
	}
	// The runner's CPU model is read from /proc/cpuinfo on a real runner;
	// here the row gives it. The record lands where the verdict job's
	// download of this attempt's report puts it.
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
	nameReport()
	return "success", jobOutputsOf(e, job, steps, ctx), cancelled
}

// runVerdictJob plays the verdict job: on a cancelled workflow its first
// step fails it; otherwise each attempt's report is read by the name the
// attempt passed on, into the folder `perfgate verdict --reports` reads,
// and the verdict step runs.
func runVerdictJob(t *testing.T, e *evaluator, job wfJob, ctx map[string]any, wfEnv map[string]string, reports string, cancelled bool) (int, string) {
	t.Helper()
	var step wfStep
	downloads := map[string]string{} // artifact name -> path
	for _, s := range job.Steps {
		if !e.ask(evalRequest{Mode: "if", Src: s.If, Ctx: ctx, Cancelled: cancelled, Success: true}).Bool {
			continue
		}
		switch {
		case s.Run != "":
			if !strings.Contains(s.Run, "exit 1") {
				t.Fatalf("the verdict job's shell step %q is not the cancel's failure", s.Name)
			}
			return verdictFailedOnCancel, "the verdict job failed: " + s.Run
		case strings.HasPrefix(s.Uses, "actions/download-artifact@"):
			if s.With["run-id"] == "" || s.With["github-token"] == "" {
				t.Fatalf("the verdict job reads a report without run-id and github-token")
			}
			downloads[e.ask(evalRequest{Mode: "interpolate", Src: s.With["name"], Ctx: ctx}).Value] = s.With["path"]
		case s.ID == "verdict":
			step = s
		}
	}
	if cancelled {
		t.Fatal("on a cancelled workflow the verdict job did not fail")
	}
	for id, v := range ctx["needs"].(map[string]any) {
		if !strings.HasPrefix(id, "attempt-") {
			continue
		}
		name, _ := v.(map[string]any)["outputs"].(map[string]any)["report"].(string)
		if name == "" {
			continue
		}
		if want := "perf-reports/perf-report-" + id; downloads[name] != want {
			t.Errorf("%s's report %q is read into %q, want %s", id, name, downloads[name], want)
		}
	}
	if step.ID == "" || step.With["command"] != "verdict" {
		t.Fatalf("the verdict step did not run, or runs %q", step.With["command"])
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

// stepUsing is the job's first step that uses an action by prefix.
func stepUsing(t *testing.T, job wfJob, prefix string) wfStep {
	t.Helper()
	for _, s := range job.Steps {
		if strings.HasPrefix(s.Uses, prefix) {
			return s
		}
	}
	t.Fatalf("job %s has no step using %s", job.ID, prefix)
	return wfStep{}
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

// "Re-run failed jobs" (same run id, run attempt 2): the build keeps its
// outputs from attempt 1 and uploads nothing again, so the re-run attempt
// job reads the arms by the name attempt 1's build passed on (through the
// REST API, run-id and a token), and uploads its report under a name of
// its own run attempt: upload-artifact refuses a second artifact of one
// name in one run attempt, and the verdict must read this attempt's.
func TestReRunFailedJobsReadTheirProducersArtifacts(t *testing.T) {
	w := readWorkflow(t, filepath.Join(moduleRoot(t), ".github", "workflows", "perf.yml"))
	e := newEvaluator(t)
	job := func(id string) wfJob {
		for _, j := range w.Jobs {
			if j.ID == id {
				return j
			}
		}
		t.Fatalf("no job %s", id)
		return wfJob{}
	}
	inputs := map[string]any{"plan": "", "name": "", "args": "", "stall-prone": "", "event": "", "tag": "", "runs-on": "ubuntu-latest"}
	ctx := func(attempt int, needs map[string]any) map[string]any {
		return map[string]any{"inputs": inputs, "needs": needs, "github": map[string]any{"run_id": "4242", "run_attempt": strconv.Itoa(attempt), "token": "ghs_fake"}}
	}
	build := runBuild(t, e, job("build"), ctx(1, map[string]any{}), 1)
	if build["arms"] != "perf-plan-arms-a1" {
		t.Fatalf("attempt 1's build names the arms %q", build["arms"])
	}
	needs := map[string]any{"build": map[string]any{"result": "success", "outputs": build}}
	reports := t.TempDir()
	_, first, _ := runAttemptJob(t, e, job("attempt-1"), 1, runnerLost, ctx(1, needs), nil, reports, false, 1)
	_, again, _ := runAttemptJob(t, e, job("attempt-1"), 1, exited(0, otherModel), ctx(2, needs), nil, reports, false, 2)
	if again["report"] != "perf-plan-report-attempt-1-a2" || again["report"] == first["report"] {
		t.Errorf("the re-run attempt job uploads its report as %q (run attempt 1's: %q), want a name of run attempt 2", again["report"], first["report"])
	}
}

// Two plans in one workflow run are two gates of their own names, so their
// artifacts never collide; a name given wins over the plan's path. No plan
// input is the default plan, named as perf/plan.toml is: the name the
// verdict service gives its plain check "perfgate" (verdict.PlanOf), the
// check the docs tell a repository to require.
func TestTwoPlansNameTheirArtifacts(t *testing.T) {
	w := readWorkflow(t, filepath.Join(moduleRoot(t), ".github", "workflows", "perf.yml"))
	e := newEvaluator(t)
	var build wfJob
	for _, j := range w.Jobs {
		if j.ID == "build" {
			build = j
		}
	}
	names := map[string]bool{}
	for _, tc := range []struct{ plan, name, gate, check string }{
		{"", "", "perf-plan", "perfgate"},
		{"perf/plan.toml", "", "perf-plan", "perfgate"},
		{"perf/search.toml", "", "perf-search", "perfgate (perf-search)"},
		{"perf/search.toml", "search-gate", "search-gate", "perfgate (search-gate)"},
	} {
		inputs := map[string]any{"plan": tc.plan, "name": tc.name, "runs-on": "ubuntu-latest", "event": "", "tag": ""}
		out := runBuild(t, e, build, map[string]any{"inputs": inputs, "github": map[string]any{"run_attempt": "1"}}, 1)
		if out["gate"] != tc.gate || out["arms"] != tc.gate+"-arms-a1" {
			t.Errorf("plan %q name %q: gate %q arms %q, want %s", tc.plan, tc.name, out["gate"], out["arms"], tc.gate)
		}
		gate, _ := out["gate"].(string)
		if check := verdict.CheckName(verdict.PlanOf(gate)); check != tc.check {
			t.Errorf("plan %q name %q: the gate %q gets the service's check %q, want %q", tc.plan, tc.name, gate, check, tc.check)
		}
		names[out["arms"].(string)] = true
	}
	if len(names) != 3 {
		t.Errorf("the three gates' arms collide: %v", names)
	}
}
