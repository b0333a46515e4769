package demo_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/demo"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/testbin"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

// perfgate is the binary the demo runs as (its arms and its dependency's
// image are that binary too), built once for the package's tests.
var perfgate string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "perfgate-demo-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if perfgate, err = testbin.Build(context.Background(), "github.com/perfgate/perfgate/cmd/perfgate", dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// quick is the profile of the demos that test something other than the
// demo's own budget and judge nothing (an interrupt, a kill): the same
// stages through `perfgate demo`'s profile flags, with 2 pairs of 1 s
// warm-up and 4 s measured and a 2 s idle phase instead of 4 x (2 s + 8 s)
// and 5 s. TestMeasuredDemoIsTheWholePipeline runs the demo as a user types it;
// the demos that must judge run judgedQuick (below).
var quick = profile("4s", 0, "2s")

// quickNoIdle is quick without the idle phase, for the tests whose
// subject is not it: with a store, the phase waits 11 s for PostgreSQL's
// counters to settle first (armdb.FlushWait), 14.5 s of a quick demo's
// 58 s with nothing measured. The whole-pipeline demo and the demo without
// an engine run it.
var quickNoIdle = profile("4s", 0, "0s")

// judgedQuick and judgedQuickNoIdle are quick and quickNoIdle for the
// demos that must reach a verdict: 5 arrivals a second (testslot.SlowRate)
// for 8 s, the same 40 answers a phase as 10 for 4 s, so that a generator
// may fall 100 ms behind its schedule before the gate says "cannot
// judge", not 50. Their
// pairs run beside the other measured tests' builds, stores and
// containers; on 2 cores whose system calls cost 1.3 us, the demo without
// an engine fell 63.7-135 ms behind in pair 1 of both its attempts and
// failed the run (run 222 in docs/testing.md), and the demo without its
// regression 50.8-67.5 ms in both of its (run 208). The gate's rule is
// the product's at every rate; the longer phases cost each demo 8 s.
var (
	judgedQuick       = profile("8s", testslot.SlowRate, "2s")
	judgedQuickNoIdle = profile("8s", testslot.SlowRate, "0s")
)

// profile is the demo's profile flags for 2 pairs of 1 s warm-up and
// measure measured, at rate arrivals a second (the demo's own rate when
// 0), with an idle phase of idle.
func profile(measure string, rate int, idle string) []string {
	flags := []string{"--pairs", "2", "--warmup", "1s", "--measure", measure, "--idle", idle}
	if rate != 0 {
		flags = append(flags, "--rate", strconv.Itoa(rate))
	}
	return flags
}

// demoRun runs `perfgate demo` as a user types it and returns its exit code
// and output. A run that cannot be judged (the shared runner fell behind
// the schedule) says nothing about the demo and runs again, as the
// product's own retry rule does, at most twice (the package's demos
// must end within go test's 10 minutes).
func demoRun(t *testing.T, bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	// A whole demo holds its slot for one to two minutes: served before
	// the 20 s gates.
	return demoRunHolding(t, testslot.HoldLong, bin, env, args...)
}

// demoRunHolding is demoRun holding what hold takes around each attempt.
func demoRunHolding(t *testing.T, hold func(testing.TB) func(), bin string, env []string, args ...string) (int, string, string) {
	t.Helper()
	var code int
	var stdout, stderr bytes.Buffer
	for attempt := 1; attempt <= 2; attempt++ {
		stdout.Reset()
		stderr.Reset()
		release := hold(t)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, bin, append([]string{"demo"}, args...)...)
		cmd.Dir, cmd.Env, cmd.WaitDelay = t.TempDir(), append(os.Environ(), env...), 30*time.Second
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		cancel()
		release()
		code = cmd.ProcessState.ExitCode()
		t.Logf("attempt %d: perfgate demo %s: exit %d (%v) in %s", attempt, strings.Join(args, " "), code, err, time.Since(start).Round(100*time.Millisecond))
		// A demo without its regression that fails anyway gets the same
		// one more run (an A/A false alarm at 2 pairs is bench/power's
		// rate, not this test's subject); a second failure stands.
		if code == 1 && attempt == 1 && slices.Contains(args, "--no-regression") {
			testslot.Retry(t, fmt.Sprintf("attempt %d: the demo without its regression failed (%s); running once more", attempt, verdictLine(stderr.String())))
			t.Logf("attempt %d:\n%s", attempt, stderr.String())
			continue
		}
		if code != exit.CannotJudge || !strings.Contains(stderr.String(), "cannot judge") {
			break
		}
		testslot.Retry(t, fmt.Sprintf("attempt %d cannot be judged (%s); running again", attempt, verdictLine(stderr.String())))
		t.Logf("cannot judge, run again:\n%s", lastLines(stderr.String(), 8))
	}
	return code, stdout.String(), stderr.String()
}

// verdictLine is the demo's verdict line ("perfgate: regression: ...",
// "perfgate: cannot judge: ..."), or its last line when it has none.
func verdictLine(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "perfgate: regression") || strings.HasPrefix(l, "perfgate: cannot judge") {
			return l
		}
	}
	return lastLines(stderr, 1)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// inOrder reports the first of want that does not follow the one before
// it in s.
func inOrder(s string, want ...string) string {
	at := 0
	for _, w := range want {
		i := strings.Index(s[at:], w)
		if i < 0 {
			return w
		}
		at += i + len(w)
	}
	return ""
}

// leftBehind lists what a demo writing into out left: processes whose
// command line names out, containers labelled with its repository, and
// the demo's dependency image.
func leftBehind(t *testing.T, out, stderr string) []string {
	t.Helper()
	var left []string
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte(out)) {
			left = append(left, "process "+f+": "+string(bytes.ReplaceAll(b, []byte{0}, []byte{' '})))
		}
	}
	if _, err := exec.LookPath("docker"); err == nil {
		ps, _ := exec.Command("docker", "ps", "-aq", "--filter", "label=perfgate.checkout="+filepath.Join(out, "repo")).Output()
		if s := strings.TrimSpace(string(ps)); s != "" {
			left = append(left, "containers "+s)
		}
		if m := regexp.MustCompile(`image (perfgate-demo-dependency:[0-9]+)`).FindStringSubmatch(stderr); m != nil {
			if exec.Command("docker", "image", "inspect", m[1]).Run() == nil {
				left = append(left, "image "+m[1])
			}
		}
	}
	for _, d := range []string{"repo", "arms"} {
		if _, err := os.Stat(filepath.Join(out, d)); err == nil {
			left = append(left, "folder "+filepath.Join(out, d))
		}
	}
	return left
}

// The demo is the whole pipeline: a repository with a release tag, the
// base resolved as the previous release, both arms built from their own
// trees, the dependency's base copy on 127.0.0.2 (read by the base, while
// the head reads its own), the store, the config check, idle, the pairs,
// the store writes, the counter and both controls, and a regression (exit
// 1) naming p50, within the demo's 2-minute budget (docs/demo.md); nothing
// stays behind. The one demo of the package run as a user types it, with
// the default profile. Its budget is for a 2-core machine running the
// demo, so it holds every gate slot its process is given: beside another
// demo, on a machine whose system calls cost 1.4 µs, it took 2m2s (the
// suite's CI run of 2026-12-05), a wall-clock bound broken by a
// neighbour, not by the demo. .ci/test gives it all of them there, and
// half of them where the machine has four or more (then two other gates
// run beside it).
func TestMeasuredDemoIsTheWholePipeline(t *testing.T) {
	t.Parallel()
	testtier.Heavy(t, testtier.Docker)
	if why := dockerMissing(); why != "" {
		t.Fatalf("this test needs a docker engine and its compose tool: %s", why)
	}
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := demoRunHolding(t, testslot.HoldAll, perfgate, nil, "--out", out)
	t.Logf("stderr:\n%s", stderr)
	if code != exit.Regression {
		t.Fatalf("perfgate demo: exit %d, want 1\n%s", code, stdout)
	}
	// The demo's done: line times the whole demo, teardown included (only
	// perfgate's own last word on the verdict follows it).
	if m := regexp.MustCompile(`(?m)\] done: wall time (\S+) \(exit 1\)$`).FindStringSubmatch(stderr); m == nil {
		t.Errorf("the demo has no done: line with its wall time and exit 1:\n%s", lastLines(stderr, 3))
	} else if wall, err := time.ParseDuration(m[1]); err != nil || wall >= 2*time.Minute {
		t.Errorf("the demo took %s (%v), over its 2-minute budget", m[1], err)
	}
	if missing := inOrder(stderr,
		"] dependency: image perfgate-demo-dependency:",
		"] repository: "+filepath.Join(out, "repo"),
		"] prepare: the base is the previous release",
		"built "+filepath.Join(out, "arms", "perf-base", "bin", "perfgate"),
		"built "+filepath.Join(out, "arms", "perf-head", "bin", "perfgate"),
		"] run: services, store, the base's config check, idle, 4 pairs, counters and controls, verdict",
		"services: 1 group(s), base copies: true",
		"base: ", // after the base's config check
		"store: PostgreSQL over TLS",
		"idle: head CPU",
		"pair 4/4: base p50",
		"store writes: the head answered",
		"counter exchanges on the head",
		"idle control (busy-loop.toml)",
		"variant control: counter exchanges on the variant",
		"] dependency: the base read its settings from http://127.0.0.2:",
		"] dependency: the head read its settings from http://127.0.0.1:",
		"] done: wall time",
	); missing != "" {
		t.Errorf("the demo's stages lack %q in order", missing)
	}
	if !strings.Contains(stderr, "--alloc=4096\n") || !strings.Contains(stderr, "--alloc=8192\n") {
		t.Errorf("the arms did not each read their own tree's dependency settings (base alloc=4096, head alloc=8192)")
	}
	// The registry perfgate generated for each arm (generate) names the
	// arm's own copy of the dependency.
	for arm, host := range map[string]string{"base": "127.0.0.2", "head": "127.0.0.1"} {
		b, err := os.ReadFile(filepath.Join(out, arm+".log"))
		if err != nil || !strings.Contains(string(b), "demo-service: the registry names settings at "+host+":") {
			t.Errorf("the %s's registry does not name its dependency on %s (%v):\n%s", arm, host, err, b)
		}
	}
	if !strings.Contains(stdout, "The base is `") || !strings.Contains(stdout, "the previous release v1.0.0") {
		t.Errorf("the base is not the previous release v1.0.0:\n%s", stdout)
	}
	if !strings.Contains(stdout, "p50.hello") || !strings.Contains(stdout, "FAIL") {
		t.Errorf("the verdict does not fail p50.hello:\n%s", stdout)
	}
	if strings.Contains(stdout, "the control passed") {
		t.Errorf("a control passed, so the gate is blind:\n%s", stdout)
	}
	if left := leftBehind(t, out, stderr); len(left) > 0 {
		t.Errorf("the demo left behind:\n%s", strings.Join(left, "\n"))
	}
	for _, f := range []string{"latest.json", "summary.md", "base.log", "head.log", "variant.log"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the demo wrote no %s: %v", f, err)
		}
	}
}

// --no-regression: the head commit changes only its dependency's settings,
// and the gate passes.
func TestMeasuredDemoWithoutRegressionPasses(t *testing.T) {
	t.Parallel()
	testtier.Heavy(t, testtier.Docker)
	if why := dockerMissing(); why != "" {
		t.Fatalf("this test needs a docker engine and its compose tool: %s", why)
	}
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := demoRun(t, perfgate, nil, append([]string{"--out", out, "--no-regression"}, judgedQuickNoIdle...)...)
	if code != exit.Pass {
		t.Fatalf("perfgate demo --no-regression: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "base copies: true") {
		t.Errorf("the head's dependency settings differ, yet the base got no copy:\n%s", stderr)
	}
	if missing := inOrder(stderr, "] run: services, store, the base's config check, 2 pairs (no idle phase),", fmt.Sprintf("pair 1/2: base leads; 1s warm-up, 8s measured at %d arrivals/s", testslot.SlowRate), "pair 2/2: base p50", "done: wall time"); missing != "" {
		t.Errorf("the demo did not run the profile its flags asked for: no %q in order:\n%s", missing, stderr)
	}
	if left := leftBehind(t, out, stderr); len(left) > 0 {
		t.Errorf("the demo left behind:\n%s", strings.Join(left, "\n"))
	}
}

// Without a docker engine the demo says so and runs the same pipeline
// without the dependency; --no-regression passes there too.
func TestMeasuredDemoWithoutDockerEngine(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo")
	code, stdout, stderr := demoRun(t, perfgate, []string{"DOCKER_HOST=unix://" + filepath.Join(t.TempDir(), "no-engine.sock")},
		append([]string{"--out", out, "--no-regression"}, judgedQuick...)...)
	if code != exit.Pass {
		t.Fatalf("perfgate demo --no-regression without an engine: exit %d, want 0\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "dependency: none: no docker engine answers") {
		t.Errorf("the demo did not say it runs without the dependency:\n%s", stderr)
	}
	if strings.Contains(stderr, "services:") {
		t.Errorf("the demo started services without an engine:\n%s", stderr)
	}
	if missing := inOrder(stderr, "prepare:", "idle: head CPU", fmt.Sprintf("1s warm-up, 8s measured at %d arrivals/s", testslot.SlowRate), "pair 2/2", "counter exchanges on the head", "done: wall time"); missing != "" {
		t.Errorf("the demo without the dependency lacks %q in order:\n%s", missing, stderr)
	}
	if left := leftBehind(t, out, stderr); len(left) > 0 {
		t.Errorf("the demo left behind:\n%s", strings.Join(left, "\n"))
	}
}

// SIGINT in the middle of the pairs: the demo tears down its arms, store,
// compose projects and image, and removes its repository. It judges
// nothing, so it runs beside the package's other parallel tests.
func TestInterruptedDemoLeavesNothing(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	if why := dockerMissing(); why != "" {
		t.Fatalf("this test needs a docker engine and its compose tool: %s", why)
	}
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, perfgate, append([]string{"demo", "--out", out}, quickNoIdle...)...)
	cmd.Dir, cmd.WaitDelay = t.TempDir(), 30*time.Second
	// A file, so the test reads what the demo wrote so far without
	// sharing a buffer with the process's writes.
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stderr = f
	stderr := fileText(f.Name())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done; done <- nil })
	for !strings.Contains(stderr.String(), "pair 1/2: base p50") {
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the demo ended before its first pair (%v):\n%s", err, stderr.String())
		case <-ctx.Done():
			t.Fatalf("the demo never finished its first pair:\n%s", stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = <-done
	done <- err
	t.Logf("the demo ended %s after SIGINT: %v", time.Since(start).Round(100*time.Millisecond), err)
	if cmd.ProcessState.ExitCode() == exit.Pass {
		t.Errorf("an interrupted demo exited 0")
	}
	if left := leftBehind(t, out, stderr.String()); len(left) > 0 {
		t.Errorf("the interrupted demo left behind:\n%s\n%s", strings.Join(left, "\n"), stderr.String())
	}
}

func dockerMissing() string {
	if _, err := exec.LookPath("docker"); err != nil {
		return "no docker CLI"
	}
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}

// fileText reads a file that another process is writing.
type fileText string

func (f fileText) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// The demo's repository passes `perfgate check`: its contract offline,
// every event's base, both plans.
func TestCheckPassesOnTheDemoRepository(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "repo")
	if _, err := demo.Build(context.Background(), dir, demo.Options{Binary: perfgate, Regression: true, Store: true,
		Image: "perfgate-demo-dependency:check", DependencyPort: 18181}); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(perfgate, "check", "--repo", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("perfgate check on the demo repository: %v\n%s", err, out)
	}
	t.Logf("perfgate check:\n%s", out)
}

// A demo killed with SIGKILL runs no teardown and leaves its dependency's
// image; the next demo removes it at its start and says so. Neither demo
// gets to its pairs, so the test runs beside the other parallel tests.
func TestKilledDemosImageIsRemovedByTheNext(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	if why := dockerMissing(); why != "" {
		t.Fatalf("this test needs a docker engine and its compose tool: %s", why)
	}
	t.Parallel()
	out := filepath.Join(t.TempDir(), "demo")
	imageLine := regexp.MustCompile(`image (perfgate-demo-dependency:[0-9]+) built`)
	start := func() (*exec.Cmd, fileText, chan error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		t.Cleanup(cancel)
		cmd := exec.CommandContext(ctx, perfgate, append([]string{"demo", "--out", out}, quick...)...)
		cmd.Dir, cmd.WaitDelay = t.TempDir(), 30*time.Second
		f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cmd.Stderr = f
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-done; done <- nil })
		return cmd, fileText(f.Name()), done
	}
	waitFor := func(stderr fileText, done chan error, what *regexp.Regexp) []string {
		deadline := time.After(2 * time.Minute)
		for {
			if m := what.FindStringSubmatch(stderr.String()); m != nil {
				return m
			}
			select {
			case err := <-done:
				done <- err
				t.Fatalf("the demo ended (%v) before %q:\n%s", err, what, stderr.String())
			case <-deadline:
				t.Fatalf("the demo never printed %q:\n%s", what, stderr.String())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	first, stderr, done := start()
	tag := waitFor(stderr, done, imageLine)[1]
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	done <- nil
	t.Cleanup(func() { _ = exec.Command("docker", "rmi", "-f", tag).Run() })
	if err := exec.Command("docker", "image", "inspect", tag).Run(); err != nil {
		t.Fatalf("the killed demo's image %s is gone by itself (%v): nothing to test", tag, err)
	}
	second, stderr2, done2 := start()
	waitFor(stderr2, done2, regexp.MustCompile(`removed `+regexp.QuoteMeta(tag)+`, left by a demo whose process is gone`))
	_ = second.Process.Signal(syscall.SIGTERM)
	<-done2
	done2 <- nil
	if err := exec.Command("docker", "image", "inspect", tag).Run(); err == nil {
		t.Errorf("the killed demo's image %s is still there after the next demo started", tag)
	}
	if left := leftBehind(t, out, stderr2.String()); len(left) > 0 {
		t.Errorf("the stopped demo left behind:\n%s", strings.Join(left, "\n"))
	}
}
