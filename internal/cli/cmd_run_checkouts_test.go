package cli

import (
	"bytes"
	"context"
	"fmt"
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
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/services/servicetest"
	"github.com/perfgate/perfgate/internal/testbin"
	"github.com/perfgate/perfgate/internal/testslot"
	"github.com/perfgate/perfgate/internal/testtier"
)

func TestMain(m *testing.M) {
	// The parallel tests wait on the commands they run (retries against a
	// closed service, child processes, timeouts); so do the measured gates,
	// each holding a gate slot only while it runs.
	testtier.Waiting(4)
	code := m.Run()
	servicetest.Cleanup()
	if exampled.dir != "" {
		os.RemoveAll(exampled.dir)
	}
	os.Exit(code)
}

// buildPerfgate builds the perfgate binary: these tests run it as a user
// types it, from a checkout's root with the default paths, and kill it.
func buildPerfgate(t *testing.T) string {
	t.Helper()
	bin, err := testbin.Build(context.Background(), "github.com/perfgate/perfgate/cmd/perfgate", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// composedCheckout is a clone, in a folder named "clone" like every other
// clone, of a repository whose gate starts services: one group (api and its
// db, a named volume) whose mounted file differs between base and head, so
// each run starts two compose projects.
func composedCheckout(t *testing.T, image string) *gittest.Repo {
	t.Helper()
	compose := `services:
  api:
    image: ` + image + `
    environment: {MESSAGE: api, FILE: /seed/data.txt}
    volumes: ["./seed/data.txt:/seed/data.txt:ro"]
    healthcheck: {test: ["CMD", "/echo", "-check"], interval: 500ms, retries: 120}
    depends_on: {db: {condition: service_healthy}}
  db:
    image: ` + image + `
    environment: {MESSAGE: db}
    volumes: ["dbdata:/data"]
    healthcheck: {test: ["CMD", "/echo", "-check"], interval: 500ms, retries: 120}
volumes:
  dbdata: {}
`
	files := func(data string) map[string]string {
		// 20 ms a request: a stall of the shared runner has to last 200 ms
		// to count as one (p99 over 10x p50).
		f := exampleTree("EXAMPLED_LATENCY=20ms\n")
		f["perf/gate.toml"] += "compose = [\"compose.yaml\"]\n"
		// The subject is which containers each run touches, not the
		// verdict: base and head answer alike, and at 4 pairs of 40
		// answers a p95 is a phase's second slowest answer and a p99 its
		// slowest, which the other checkout's run (its compose CLI, its
		// arms) moves at will: a clean rehearsal once failed the A/A on
		// p95.hello (+14.9 % against a floor of 13.1 %, in 4 of 4 pairs),
		// and at 50 % run 134 failed it on p95.item (+57.9 %, 46 against
		// 31 ms, in 3 of 4 pairs, p50 equal to 0.2 ms). So the medians
		// are judged, at 50 %, and the tails only past ten times the
		// base's: a run that broke the other's services still fails on
		// its errors, its p50 or its cannot judge. The gate's false
		// alarms are bench/power's.
		f["perf/plan.toml"] += "\n[tolerance]\nlatency = 50\ncpu = 50\n" +
			"\"p95.hello\" = 1000\n\"p99.hello\" = 1000\n\"p95.item\" = 1000\n\"p99.item\" = 1000\n"
		f["compose.yaml"] = compose
		f["seed/data.txt"] = data
		f[".gitignore"] = "target/\n"
		return f
	}
	r := gittest.New(t)
	r.Commit("gate", files("base data"))
	r.Git("checkout", "-q", "-b", "change")
	r.Commit("new seed", files("head data"))
	return r.Clone()
}

// perfgateIn runs the binary in dir, as typed at that folder's prompt.
func perfgateIn(ctx context.Context, bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = os.Environ()
	cmd.WaitDelay = 30 * time.Second
	return cmd
}

var runIDLine = regexp.MustCompile(`(?m)^run (perfgate-[0-9a-z]+):`)

// The gate's "run" flags that keep a run short; every path is a default.
// Two runs share the machine's 2 cores, so the rate is low enough that
// neither generator falls behind half an arrival interval (100 ms at 5 a
// second), and the warm-up long enough for the other run's compose CLI to
// have started. At 8 a second (62.5 ms) a new machine's first rehearsal
// (run 140) made five runs where two were due: the generators fell 66
// to 140 ms behind, about one second in a run's 56, while the other run's
// docker-compose and arms started. The subject is which containers each
// run touches; 25 answers a phase still judge the medians.
var shortRun = []string{"run", "--store=false", "--pairs", "4", "--warmup", "2s", "--measure", "5s", "--rate", "5", "--idle", "0"}

// Two checkouts on one runner whose folders share a name: a run of the
// first killed with SIGKILL leaves its services; the next run of that
// checkout removes them, and runs at the same time as a run of the other
// checkout: both pass, each with its own compose projects, neither touching
// the other's containers. Every command runs from the checkout's root with
// the default paths (--target target, --repo ., --log-dir), which
// docker-compose 1.29 once refused with FileNotFoundError.
func TestMeasuredRunsOfCheckoutsThatShareAFolderName(t *testing.T) {
	t.Parallel()
	testtier.Heavy(t, testtier.Docker)
	useExampled(t)
	img := servicetest.Image(t)
	bin := buildPerfgate(t)
	a, b := composedCheckout(t, img), composedCheckout(t, img)
	if filepath.Base(a.Dir) != filepath.Base(b.Dir) || a.Dir == b.Dir {
		t.Fatalf("checkouts %s and %s: want two folders of one name", a.Dir, b.Dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	var runIDs []string
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, id := range runIDs {
			_ = services.DownByLabel(context.Background(), id)
		}
	})
	addRun := func(id string) { mu.Lock(); runIDs = append(runIDs, id); mu.Unlock() }

	for _, r := range []*gittest.Repo{a, b} {
		out, err := perfgateIn(ctx, bin, r.Dir, "prepare", "--event", "pull_request", "--base-ref", "main").CombinedOutput()
		if err != nil {
			t.Fatalf("perfgate prepare in %s: %v\n%s", r.Dir, err, out)
		}
	}

	// A run of a killed: its arms die with it, its services stay.
	killedID := killMidRun(t, ctx, bin, a.Dir)
	addRun(killedID)
	left, err := services.Leftovers(ctx, killedID)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) == 0 {
		t.Fatalf("the killed run %s left nothing: nothing to sweep", killedID)
	}
	t.Logf("killed run %s left %d containers, networks and volumes", killedID, len(left))

	// Watch every container of both checkouts while they run: a run that
	// recreated the other's containers would show a second container of one
	// project and service.
	watchCtx, stopWatch := context.WithCancel(ctx)
	seen := watchContainers(t, watchCtx, a.Dir, b.Dir)

	runs := make([][]attempt, 2)
	var wg sync.WaitGroup
	for i, r := range []*gittest.Repo{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runs[i] = passingRun(t, ctx, bin, r.Dir)
			for _, at := range runs[i] {
				addRun(at.runID)
			}
		}()
	}
	wg.Wait()
	stopWatch()
	projects := <-seen

	var all []string
	for i, dir := range []string{a.Dir, b.Dir} {
		for n, at := range runs[i] {
			if at.runID == "" {
				t.Errorf("attempt %d of perfgate run in %s did not print its run id first:\n%s", n+1, dir, at.stderr)
				continue
			}
			all = append(all, at.runID)
			// Each attempt had its own two projects (head and base copy),
			// each with one container per service for the whole run.
			for _, p := range []string{services.ProjectName("clone", at.runID), services.ProjectName("clone", at.runID) + services.BaseSuffix} {
				for _, svc := range []string{"api", "db"} {
					if n := len(projects[p+"/"+svc]); n != 1 {
						t.Errorf("run %s of %s: project %s service %s had %d containers %v, want 1", at.runID, dir, p, svc, n, projects[p+"/"+svc])
					}
				}
			}
		}
		if last := runs[i][len(runs[i])-1]; last.err != nil {
			// Each earlier attempt's reason too: one reason four times
			// is the machine's pattern, four reasons its noise.
			var why []string
			for n, at := range runs[i][:len(runs[i])-1] {
				why = append(why, fmt.Sprintf("attempt %d: %s", n+1, lastLine(at.stderr)))
			}
			t.Errorf("perfgate run in %s, after %d attempts: %v\n%s\nlast attempt:\n%s", dir, len(runs[i]), last.err, strings.Join(why, "\n"), last.stderr)
		}
	}
	if first := runs[0][0].stderr; !strings.Contains(first, "removed run "+killedID+" of this checkout") {
		t.Errorf("the next run of %s did not say it removed the killed run %s:\n%s", a.Dir, killedID, first)
	}
	for _, at := range runs[1] {
		if strings.Contains(at.stderr, killedID) {
			t.Errorf("the run of the other checkout %s touched the killed run %s of %s:\n%s", b.Dir, killedID, a.Dir, at.stderr)
		}
	}
	for _, id := range append(all, killedID) {
		if left, err := services.Leftovers(context.Background(), id); err != nil || len(left) > 0 {
			t.Errorf("run %s left %v (%v)", id, left, err)
		}
	}
	for key, ctrs := range projects {
		if len(ctrs) > 1 {
			t.Errorf("%s was recreated: containers %v", key, ctrs)
		}
	}

	// `services up` from the checkout's root with its default --log-dir.
	runID := "defaults" + fmt.Sprint(time.Now().UnixNano()%1e9)
	addRun(runID)
	out, err := perfgateIn(ctx, bin, a.Dir, "services", "up", "--base", "target/perf-base/tree", "--run-id", runID).CombinedOutput()
	if err != nil {
		t.Fatalf("perfgate services up with the default --log-dir: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(a.Dir, "target", "perf-run", "services", "compose-"+services.ProjectName("clone", runID)+".yaml")); err != nil {
		t.Errorf("services up wrote no resolved file under the default --log-dir: %v\n%s", err, out)
	}
	if out, err := perfgateIn(ctx, bin, a.Dir, "services", "down", "--run-id", runID).CombinedOutput(); err != nil {
		t.Fatalf("perfgate services down: %v\n%s", err, out)
	}
}

// killMidRun starts `perfgate run` in dir, SIGKILLs it once both arms run
// (its services are up) and returns the run id it printed.
func killMidRun(t *testing.T, ctx context.Context, bin, dir string) string {
	t.Helper()
	cmd := perfgateIn(ctx, bin, dir, append(shortRun, "--measure", "60s")...)
	stderr := attach(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	headLog := filepath.Join(dir, "target", "perf-run", "head.log")
	deadline := time.After(5 * time.Minute)
	for {
		if _, err := os.Stat(headLog); err == nil {
			break
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("the run to kill ended before its arms started (%v):\n%s", err, stderr.String())
		case <-deadline:
			t.Fatalf("the run to kill never started its arms:\n%s", stderr.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	time.Sleep(time.Second)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-done
	done <- err
	m := runIDLine.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("the killed run printed no run id:\n%s", stderr.String())
	}
	return m[1]
}

// attempt is one `perfgate run` of a checkout.
type attempt struct {
	runID, stderr string
	err           error
}

// passingRun runs the short gate in dir. A run that cannot be judged (the
// shared runner stalled: two runs and their compose CLIs on two shared
// cores) says nothing about the code and runs again, as the product's retry
// rule does; every attempt is returned, the last one last.
func passingRun(t *testing.T, ctx context.Context, bin, dir string) []attempt {
	var out []attempt
	for range 4 {
		// The last link of this test's chain (prepare, the killed run,
		// these runs): served before the single gates (testslot.AcquireLong).
		release, err := testslot.AcquireLong(ctx, "TestMeasuredRunsOfCheckoutsThatShareAFolderName/"+filepath.Base(filepath.Dir(dir)))
		if err != nil {
			return append(out, attempt{err: err})
		}
		var stderr bytes.Buffer
		cmd := perfgateIn(ctx, bin, dir, shortRun...)
		cmd.Stderr = &stderr
		err = cmd.Run()
		release()
		a := attempt{stderr: stderr.String(), err: err}
		if m := runIDLine.FindStringSubmatch(a.stderr); m != nil && strings.HasPrefix(a.stderr, m[0]) {
			a.runID = m[1]
		}
		out = append(out, a)
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(a.stderr, "cannot judge") {
			break
		}
		testslot.Retry(t, fmt.Sprintf("a run in %s cannot be judged (%s); running again", dir, lastLine(a.stderr)))
	}
	return out
}

// watchContainers follows the engine's container events for either
// checkout (docker events, one process) until ctx ends, then sends
// "project/service" -> every container id created. Events rather than a
// `docker ps` every 300 ms: that poll cost the two measured runs a docker
// CLI call or two a second on two cores, and it missed a container that
// lived less than a poll.
func watchContainers(t *testing.T, ctx context.Context, checkouts ...string) <-chan map[string][]string {
	t.Helper()
	args := []string{"events", "--since", strconv.FormatInt(time.Now().Add(-time.Second).Unix(), 10),
		"--filter", "type=container", "--filter", "event=create",
		// Two label filters must both match, so the checkout is told
		// apart below, by the label's value in the line.
		"--filter", "label=" + services.CheckoutLabel,
		"--format", `{{.Actor.ID}} {{index .Actor.Attributes "com.docker.compose.project"}}/{{index .Actor.Attributes "com.docker.compose.service"}} {{index .Actor.Attributes "` + services.CheckoutLabel + `"}}`}
	mine := map[string]bool{}
	for _, c := range checkouts {
		mine[gate.Checkout(c)] = true
	}
	cmd := exec.CommandContext(ctx, "docker", args...)
	var buf bytes.Buffer
	cmd.Stdout = &buf
	if err := cmd.Start(); err != nil {
		t.Fatalf("watching the checkouts' containers: %v", err)
	}
	out := make(chan map[string][]string, 1)
	go func() {
		_ = cmd.Wait() // ctx's end kills it
		seen := map[string]map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			f := strings.SplitN(l, " ", 3)
			if len(f) != 3 || !mine[f[2]] {
				continue
			}
			id, key := f[0], f[1]
			if seen[key] == nil {
				seen[key] = map[string]bool{}
			}
			seen[key][id] = true
		}
		res := map[string][]string{}
		for k, ids := range seen {
			for id := range ids {
				res[k] = append(res[k], id)
			}
		}
		out <- res
	}()
	return out
}

// stderrFile is a file for a process's stderr, read while it runs.
type stderrFile struct{ path string }

// attach points cmd's stderr at a new file of the test's.
func attach(t *testing.T, cmd *exec.Cmd) *stderrFile {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd.Stderr = f
	return &stderrFile{path: f.Name()}
}

func (s *stderrFile) String() string {
	b, _ := os.ReadFile(s.path)
	return string(b)
}

// lastLine is s's last line that is not empty.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}
