package actiontest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/exampleservice"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/services/servicetest"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

// runner is a fake runner's folders on this machine, laid out as a GitHub
// runner's work folder, and what it needs to start the action.
type runner struct {
	t        *testing.T
	image    string
	work     string // the workspace: the repository's checkout
	temp     string // RUNNER_TEMP (_temp)
	network  string // the job's bridge network, github_network_<id>
	label    string // on every container this runner starts
	runID    string
	commands string // _temp/_runner_file_commands
	output   string // GITHUB_OUTPUT's host path
	summary  string // GITHUB_STEP_SUMMARY's host path
	mu       sync.Mutex
	gateRuns []string // perfgate run ids seen, swept in cleanup
}

func newRunner(t *testing.T, image string) *runner {
	t.Helper()
	root := t.TempDir()
	id := randomHex(t, 8)
	r := &runner{
		t: t, image: image,
		work:    filepath.Join(root, "work", "repo", "repo"),
		temp:    filepath.Join(root, "work", "_temp"),
		network: "github_network_" + id,
		label:   "perfgate-actiontest-" + id,
		runID:   strconv.Itoa(int(time.Now().Unix())),
	}
	r.commands = filepath.Join(r.temp, "_runner_file_commands")
	for _, d := range []string{r.commands, filepath.Join(r.temp, "_github_home"), filepath.Join(r.temp, "_github_workflow")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run(t, time.Minute, "docker", "network", "create", "--driver", "bridge", "--label", r.label, r.network)
	t.Cleanup(r.cleanup)
	return r
}

// cleanup removes every container this runner or its action started (the
// action's siblings and build containers included), the gate runs'
// compose projects, and the network.
func (r *runner) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, filter := range []string{"label=" + r.label, "label=" + host.SiblingLabel + "=" + r.siblingLabel()} {
		out, _ := exec.CommandContext(ctx, "docker", "ps", "-aq", "--filter", filter).Output()
		for _, id := range strings.Fields(string(out)) {
			_ = exec.CommandContext(ctx, "docker", "rm", "-f", id).Run()
		}
	}
	r.mu.Lock()
	for _, id := range r.gateRuns {
		_ = services.DownByLabel(ctx, id)
	}
	r.mu.Unlock()
	_ = exec.CommandContext(ctx, "docker", "network", "rm", r.network).Run()
}

func (r *runner) siblingLabel() string { return r.runID + "-1-attempt-1" }

// step is one container action step: the runner's own docker run.
type step struct {
	name    string
	cmd     *exec.Cmd
	out     *output
	done    chan error
	outputs string // the step's GITHUB_OUTPUT host path
}

// start starts the action the way the runner's container action handler
// does: --workdir /github/workspace, the socket and the five mounts, -e for
// each GITHUB_*, INPUT_* and runner variable (names only, values from the
// environment), the job's bridge network, --rm.
func (r *runner) start(command, args string) *step {
	r.t.Helper()
	n := randomHex(r.t, 6)
	log, err := os.Create(filepath.Join(r.t.TempDir(), "action-"+n+".log"))
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { log.Close() })
	s := &step{name: "action-" + n, out: &output{path: log.Name()}, done: make(chan error, 1)}
	s.outputs = filepath.Join(r.commands, "set_output_"+n)
	r.summary = filepath.Join(r.commands, "step_summary_"+n)
	for _, f := range []string{s.outputs, r.summary} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.output = s.outputs
	env := map[string]string{
		"INPUT_COMMAND": command, "INPUT_ARGS": args,
		"HOME":                "/github/home",
		"GITHUB_ACTIONS":      "true",
		"CI":                  "true",
		"GITHUB_WORKSPACE":    "/github/workspace",
		"GITHUB_OUTPUT":       "/github/file_commands/set_output_" + n,
		"GITHUB_STEP_SUMMARY": "/github/file_commands/step_summary_" + n,
		"GITHUB_EVENT_NAME":   "pull_request",
		"GITHUB_EVENT_PATH":   "/github/workflow/event.json",
		"GITHUB_RUN_ID":       r.runID,
		"GITHUB_RUN_ATTEMPT":  "1",
		"GITHUB_JOB":          "attempt-1",
		"GITHUB_REPOSITORY":   "perfgate/fixture",
		"RUNNER_TEMP":         "/github/runner_temp",
		"PERFGATE_ATTEMPT":    "1",
	}
	dargs := []string{"run", "--name", s.name, "--label", r.label, "--workdir", "/github/workspace", "--rm", "--network", r.network}
	for k := range env {
		dargs = append(dargs, "-e", k)
	}
	dargs = append(dargs,
		"-v", "/var/run/docker.sock:/var/run/docker.sock",
		"-v", filepath.Join(r.temp, "_github_home")+":/github/home",
		"-v", filepath.Join(r.temp, "_github_workflow")+":/github/workflow",
		"-v", r.commands+":/github/file_commands",
		"-v", r.work+":/github/workspace",
		"-v", r.temp+":/github/runner_temp",
		r.image, command, args)
	s.cmd = exec.Command("docker", dargs...)
	s.cmd.Env = os.Environ()
	for k, v := range env {
		s.cmd.Env = append(s.cmd.Env, k+"="+v)
	}
	// A file, not a buffer: the docker CLI writes it directly while the
	// test reads it.
	s.cmd.Stdout, s.cmd.Stderr = log, log
	if err := s.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	go func() { s.done <- s.cmd.Wait() }()
	r.t.Cleanup(func() {
		_ = exec.Command("docker", "rm", "-f", s.name).Run()
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			_ = s.cmd.Process.Kill()
		}
	})
	return s
}

// wait waits for the step's end and returns its exit code.
func (s *step) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case err := <-s.done:
		s.done <- err
		if err == nil {
			return 0
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		t.Fatalf("the action %s: %v", s.name, err)
	case <-time.After(limit):
		t.Fatalf("the action %s did not end within %s:\n%s", s.name, limit, s.out.String())
	}
	return -1
}

// runStep runs one step to its end and returns its exit code and output.
func (r *runner) runStep(command, args string, limit time.Duration) (int, string) {
	r.t.Helper()
	s := r.start(command, args)
	code := s.wait(r.t, limit)
	r.noteRunIDs(s.out.String())
	return code, s.out.String()
}

var runIDRe = regexp.MustCompile(`(?m)run (perfgate-[0-9a-z]+):`)

func (r *runner) noteRunIDs(out string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range runIDRe.FindAllStringSubmatch(out, -1) {
		r.gateRuns = append(r.gateRuns, m[1])
	}
}

// fixture is the repository under test: the example service, built inside
// build_image, over one compose dependency (the FROM-scratch echo server)
// published on 127.0.0.1:port, whose answer differs between base and head
// so the base gets its own copy on 127.0.0.2.
func fixture(t *testing.T, buildImage, depImage string, port int) *gittest.Repo {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "exampled")
	gobuild := exec.Command("go", "build", "-o", bin, exampleservice.Package)
	gobuild.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := gobuild.CombinedOutput(); err != nil {
		t.Fatalf("building the example service: %v\n%s", err, out)
	}
	svc, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	files := func(message string) map[string]string {
		return map[string]string{
			"perf/gate.toml": `build_image = "` + buildImage + `"
build = "mkdir -p bin && install -m 0755 svc/exampled bin/svc"
binary = "bin/svc"
start = "@BIN@ --addr 127.0.0.1:@PORT@"
check = "true"
config = "perf/service.toml"
config_env = "SVC_CONFIG"
prefix = "EXAMPLED_"
ready = "/healthz"
compose = ["compose.yaml"]
`,
			"perf/service.toml": "addr = \"127.0.0.1:@PORT@\"\nupstream = \"http://127.0.0.1:" + strconv.Itoa(port) + "/\"\n",
			"perf/arm.env":      "EXAMPLED_LATENCY=2ms\n",
			"perf/plan.toml":    "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n\n[[group]]\nname = \"item\"\npath = \"/items/7\"\nexpect = 200\n",
			"compose.yaml": `services:
  dep:
    image: ` + depImage + `
    environment: {MESSAGE: ` + message + `}
    ports: ["127.0.0.1:` + strconv.Itoa(port) + `:80"]
    healthcheck: {test: ["CMD", "/echo", "-check"], interval: 500ms, retries: 120}
`,
			"svc/exampled": string(svc),
			".gitignore":   "target/\nperf-arms.tar.gz\n",
		}
	}
	r := gittest.New(t)
	r.Git("checkout", "-q", "-b", "main")
	r.Commit("gate", files("dep-of-base"))
	r.Git("checkout", "-q", "-b", "change")
	r.Commit("the dependency answers otherwise", files("dep-of-head"))
	return r
}

// The action on a runner: prepare (the builds in build_image), pack, a
// fresh workspace, unpack and run, each started as the runner starts a
// container action, on the job's bridge network. The gate runs in a
// sibling on the host's network: its verdict lands in GITHUB_OUTPUT and its
// summary in GITHUB_STEP_SUMMARY. A second run, sent SIGTERM mid-pair
// while the base's copy of the dependency answers on 127.0.0.2, leaves no
// container, compose project, process or PostgreSQL behind.
func TestMeasuredActionOnARunner(t *testing.T) {
	testtier.Heavy(t, testtier.Debootstrap)
	began := time.Now()
	img := actionImage(t)
	imageReady := time.Now()
	buildImage := debianBase(t)
	dep := servicetest.Image(t)
	t.Cleanup(servicetest.Cleanup)
	port := freePortOnBoth(t)
	repo := fixture(t, buildImage, dep, port)

	// The runner's job judges a real gate: one of the machine's slots
	// (internal/testslot) keeps it from measuring beside too many others.
	defer testslot.HoldLong(t)() // most of a minute: served before the short gates
	rn := newRunner(t, img)
	run(t, time.Minute, "git", "clone", "-q", "--branch", "change", repo.Dir, rn.work)

	// The build job.
	if code, out := rn.runStep("prepare", "--event pull_request --base-ref origin/main", 10*time.Minute); code != 0 {
		t.Fatalf("prepare exited %d:\n%s", code, out)
	} else if !strings.Contains(out, "in the image "+buildImage) || !strings.Contains(out, "host's network") {
		t.Errorf("prepare did not build in build_image beside the action:\n%s", out)
	}
	if code, out := rn.runStep("pack", "--out perf-arms.tar.gz", 2*time.Minute); code != 0 {
		t.Fatalf("pack exited %d:\n%s", code, out)
	}
	// An attempt job is a fresh runner: only the checkout and the archive.
	if err := os.RemoveAll(filepath.Join(rn.work, "target")); err != nil {
		t.Fatal(err)
	}
	if code, out := rn.runStep("unpack", "--in perf-arms.tar.gz", 2*time.Minute); code != 0 {
		t.Fatalf("unpack exited %d:\n%s", code, out)
	}

	short := "--pairs 2 --warmup 500ms --measure 3s --rate 10 --idle 0"
	code, out := rn.runStep("run", short, 8*time.Minute)
	outputs := readOutputs(t, rn.output)
	want := map[int]string{0: "pass", 1: "regression", 2: "cannot-judge"}[code]
	if want == "" || outputs["verdict"] != want || outputs["exit-code"] != strconv.Itoa(code) {
		t.Errorf("run exited %d with outputs %v, want verdict %q and exit-code %d\n%s", code, outputs, want, code, out)
	}
	summary, _ := os.ReadFile(rn.summary)
	if !strings.Contains(string(summary), "perfgate") || !strings.Contains(string(summary), "| base |") {
		t.Errorf("GITHUB_STEP_SUMMARY holds no gate summary:\n%s\n%s", summary, out)
	}
	baseCfg, _ := os.ReadFile(filepath.Join(rn.work, "target", "perf-run", "base", "service.toml"))
	if !strings.Contains(string(baseCfg), "127.0.0.2:"+strconv.Itoa(port)) {
		t.Errorf("the base's config does not name its own copy on 127.0.0.2:%d:\n%s", port, baseCfg)
	}
	rep, _ := os.ReadFile(filepath.Join(rn.work, "target", "perf-run", "latest.json"))
	if !strings.Contains(string(rep), `"attempt": 1`) || !strings.Contains(string(rep), `"run_attempt": 1`) || !strings.Contains(string(rep), `"cpu_model": "`+host.CPUModel()+`"`) {
		t.Errorf("the report does not carry its attempt and the runner's CPU model:\n%.600s", rep)
	}
	assertNothingLeft(t, rn)
	t.Logf("prepare, pack, unpack and run through the action: %s; the run's verdict: %s", time.Since(imageReady).Round(time.Second), outputs["verdict"])

	// The rest of the attempt job and the verdict job, as the reusable
	// workflow runs them: attempts next keeps its record beside the report;
	// the verdict job reads the uploaded folder.
	if c, out := rn.runStep("attempts next", "--attempt 1 --exit-code "+strconv.Itoa(code), time.Minute); c != 0 {
		t.Fatalf("attempts next exited %d:\n%s", c, out)
	}
	next := readOutputs(t, rn.output)
	if wantNext := map[int]string{0: "final", 1: "final", 2: "retry"}[code]; next["next"] != wantNext || next["reason"] == "" {
		t.Errorf("attempts next after exit %d set %v, want next=%s and a reason", code, next, wantNext)
	}
	uploaded := filepath.Join(rn.work, "perf-reports", "perf-report-attempt-1", "perf-run")
	if err := os.MkdirAll(uploaded, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"latest.json", "summary.md", "attempt.json"} {
		b, err := os.ReadFile(filepath.Join(rn.work, "target", "perf-run", f))
		if err != nil {
			t.Fatalf("the attempt left no %s to upload: %v", f, err)
		}
		if err := os.WriteFile(filepath.Join(uploaded, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vcode, vout := rn.runStep("verdict", "--reports perf-reports --job-results success,skipped,skipped", time.Minute)
	if vcode != code {
		t.Errorf("the verdict exited %d over one attempt that exited %d:\n%s", vcode, code, vout)
	}
	vsum, _ := os.ReadFile(rn.summary)
	if !strings.Contains(string(vsum), "| 1 | "+host.CPUModel()+" | "+want+" |") {
		t.Errorf("the verdict's job summary lacks attempt 1 on this runner's CPU model:\n%s", vsum)
	}

	// A cancelled job (a person, or the job's time limit), mid-pair, as the
	// runner cancels a step: SIGINT to the step's process (the docker run
	// client, which passes it to the container), SIGTERM 7.5 s later, a kill
	// 2.5 s after that. Killing the client does not stop a container, so by
	// then the action's container and its sibling must be gone.
	s := rn.start("run", "--pairs 2 --warmup 500ms --measure 60s --rate 10 --idle 0")
	waitFor(t, s, "pair 1/2", 5*time.Minute)
	sibling := siblingID(t, rn)
	for addr, wantMsg := range map[string]string{"127.0.0.2": "dep-of-base", "127.0.0.1": "dep-of-head"} {
		if got := get(t, "http://"+net.JoinHostPort(addr, strconv.Itoa(port))+"/"); !strings.Contains(got, wantMsg) {
			t.Errorf("%s:%d answered %q mid-run, want the %s", addr, port, got, wantMsg)
		}
	}
	stopped := time.Now()
	// What the action prints from here on says which teardown took the
	// time when it outlives the runner's kill.
	before := len(s.out.String())
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code = -1
	select {
	case err := <-s.done:
		s.done <- err
		code = s.wait(t, time.Second)
	case <-time.After(7500 * time.Millisecond):
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-s.done:
			s.done <- err
			code = s.wait(t, time.Second)
		case <-time.After(2500 * time.Millisecond):
			_ = s.cmd.Process.Kill()
			after := s.out.String()
			t.Errorf("the action outlived the runner's SIGINT and SIGTERM (10 s): killed; what it printed after the SIGINT:\n%s", after[min(before, len(after)):])
		}
	}
	took := time.Since(stopped)
	if after := s.out.String(); code != -1 {
		t.Logf("the action stopped %s after the SIGINT; what it printed meanwhile:\n%s", took.Round(time.Millisecond), after[min(before, len(after)):])
	}
	for what, filter := range map[string]string{"the action's container": "name=^" + s.name + "$", "its sibling": "id=" + sibling} {
		if out := strings.TrimSpace(run(t, time.Minute, "docker", "ps", "-aq", "--filter", filter)); out != "" {
			t.Errorf("%s (%s) is still there %s after the step's SIGINT, past the runner's kill", what, out, took.Round(100*time.Millisecond))
		}
	}
	rn.noteRunIDs(s.out.String())
	t.Logf("after the runner's SIGINT the action exited %d in %s", code, took.Round(100*time.Millisecond))
	assertNothingLeft(t, rn)
	if left := processesOf(t, sibling); len(left) > 0 {
		t.Errorf("processes of the sibling %s remain (PostgreSQL, arms): %v", sibling[:12], left)
	}
	t.Logf("end to end: %s after the image was ready, %s with the image build", time.Since(imageReady).Round(time.Second), time.Since(began).Round(time.Second))
}

// assertNothingLeft checks that no container this runner's steps started
// remains and that every gate run's compose projects are gone.
func assertNothingLeft(t *testing.T, rn *runner) {
	t.Helper()
	for _, filter := range []string{"label=" + rn.label, "label=" + host.SiblingLabel} {
		out := run(t, time.Minute, "docker", "ps", "-aq", "--filter", filter)
		if ids := strings.Fields(out); len(ids) > 0 && filter == "label="+rn.label {
			t.Errorf("containers of the runner remain: %v", ids)
		} else if len(ids) > 0 {
			// Siblings of other tests may run; only this run's count.
			mine := run(t, time.Minute, "docker", "ps", "-aq", "--filter", "label="+host.SiblingLabel+"="+rn.siblingLabel())
			if strings.TrimSpace(mine) != "" {
				t.Errorf("the action's sibling remains: %s", mine)
			}
		}
	}
	rn.mu.Lock()
	ids := append([]string(nil), rn.gateRuns...)
	rn.mu.Unlock()
	if len(ids) == 0 {
		t.Errorf("no gate run printed its run id")
	}
	for _, id := range ids {
		if left, err := services.Leftovers(context.Background(), id); err != nil || len(left) > 0 {
			t.Errorf("gate run %s left %v (%v)", id, left, err)
		}
	}
}

// siblingID is the running sibling's full container ID.
func siblingID(t *testing.T, rn *runner) string {
	t.Helper()
	out := strings.Fields(run(t, time.Minute, "docker", "ps", "-q", "--no-trunc", "--filter", "label="+host.SiblingLabel+"="+rn.siblingLabel()))
	if len(out) != 1 {
		t.Fatalf("want one running sibling labelled %s, found %v", rn.siblingLabel(), out)
	}
	return out[0]
}

// processesOf lists the machine's processes in the container's cgroup.
func processesOf(t *testing.T, id string) []string {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var left []string
	for _, d := range dirs {
		cg, err := os.ReadFile(filepath.Join(d, "cgroup"))
		if err != nil || !bytes.Contains(cg, []byte(id)) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(d, "cmdline"))
		left = append(left, filepath.Base(d)+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
	}
	return left
}

func waitFor(t *testing.T, s *step, text string, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !strings.Contains(s.out.String(), text) {
		select {
		case err := <-s.done:
			s.done <- err
			t.Fatalf("the action ended (%v) before %q:\n%s", err, text, s.out.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %s:\n%s", text, limit, s.out.String())
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "error: " + err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// freePortOnBoth is a port nobody listens on at 127.0.0.1 or 127.0.0.2.
func freePortOnBoth(t *testing.T) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", net.JoinHostPort("127.0.0.2", strconv.Itoa(port)))
		l.Close()
		if err == nil {
			l2.Close()
			return port
		}
	}
	t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	return 0
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// output is what a step's docker CLI printed, read back from its log file.
type output struct{ path string }

func (o *output) String() string {
	b, _ := os.ReadFile(o.path)
	return string(b)
}
