package services

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/perfgate/perfgate/internal/exit"
)

// Running is a run's started services: the head's project and, when any
// group differs, the base's copy.
type Running struct {
	RunID string
	// Projects are the started compose projects, head first.
	Projects []StartedProject
	// Healthy is how long it took from the start of Up to all healthy.
	Healthy time.Duration

	tool   composeTool
	logDir string
	down   bool
}

// StartedProject is one compose project of a run and its resolved file.
type StartedProject struct {
	Name     string
	File     string
	Services []string
}

// teardownTimeout bounds teardown, which runs on a fresh context: a run
// cancelled mid-start must still remove what it started.
const teardownTimeout = 2 * time.Minute

// Start says how Up starts a plan.
type Start struct {
	// RunID labels everything started (perfgate.run) and is part of both
	// project names, so two runs of checkouts that share a folder name
	// never meet.
	RunID string
	// LogDir receives the resolved compose files and the logs; relative
	// paths are made absolute (the compose CLI runs in the file's folder).
	LogDir string
	// Checkout is the checkout the run belongs to (perfgate.checkout):
	// a later run of it finds and removes what a killed one left.
	Checkout string
	// Owner names the process that owns the run (perfgate.owner), so that
	// a later run can tell whether it is gone. Empty for services meant to
	// outlive their starter (`perfgate services up`): never swept.
	Owner string
}

// ProjectName is the compose project of a run: the tree's project and the
// run id, in the characters every compose CLI keeps.
func ProjectName(project, runID string) string {
	return SafeName(project) + "-" + SafeName(runID)
}

// SafeName lower-cases s and keeps [a-z0-9_-], as docker-compose 1.29
// does with a project name (it drops the rest silently; the v2 plugin and
// compose-go refuse them).
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}

// Up starts the head's project (every head service, the shared groups
// included), then the base's copy of the differing groups as
// `<project>-<run id>-perf-base` on 127.0.0.2, and waits until every
// container is healthy (or, without a health check, answers on its
// published ports). On any failure, cancellation included, it tears down
// before returning.
func Up(ctx context.Context, p *Plan, st Start) (*Running, error) {
	runID := st.RunID
	// The id is part of the project names: every character must survive
	// SafeName, or two ids could name one project.
	if runID == "" || SafeName(runID) != strings.ToLower(runID) {
		return nil, exit.Refusef("run id %q: give a non-empty id of letters, digits, '-' or '_'", runID)
	}
	t, err := findCompose(ctx)
	if err != nil {
		return nil, exit.Refuse(err)
	}
	// docker-compose 1.29 runs in the file's folder and resolves -f from
	// there: a relative log folder would name a file that is not there.
	logDir, err := filepath.Abs(st.LogDir)
	if err != nil {
		return nil, fmt.Errorf("resolving the services' log folder %s: %w", st.LogDir, err)
	}
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return nil, fmt.Errorf("making the services' log folder %s: %w", logDir, err)
	}
	labels := types.Labels{RunLabel: runID}
	if st.Checkout != "" {
		labels[CheckoutLabel] = st.Checkout
	}
	if st.Owner != "" {
		labels[OwnerLabel] = st.Owner
	}
	start := time.Now()
	r := &Running{RunID: runID, tool: t, logDir: logDir}
	headName := ProjectName(p.Project, runID)
	projects := []struct {
		name string
		proj func() *types.Project
	}{
		{headName, func() *types.Project { return p.headProject(headName, labels) }},
	}
	if p.Copied() {
		baseName := headName + BaseSuffix
		projects = append(projects, struct {
			name string
			proj func() *types.Project
		}{baseName, func() *types.Project { return p.baseProject(baseName, labels) }})
	}
	for _, pr := range projects {
		proj := pr.proj()
		body, err := resolvedYAML(proj)
		if err != nil {
			return nil, r.abort(ctx, err)
		}
		file := filepath.Join(logDir, "compose-"+pr.name+".yaml")
		if err := os.WriteFile(file, body, 0o644); err != nil {
			return nil, r.abort(ctx, fmt.Errorf("writing %s: %w", file, err))
		}
		r.Projects = append(r.Projects, StartedProject{Name: pr.name, File: file, Services: serviceNames(proj)})
	}
	// The two projects share nothing, so they start side by side: the
	// compose CLI's own start-up is most of the wait on a busy runner.
	errs := make([]error, len(r.Projects))
	var wg sync.WaitGroup
	for i, pr := range r.Projects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.compose(ctx, pr.Name, pr.File, "up", "up", "-d", "--no-color"); err != nil {
				errs[i] = fmt.Errorf("starting compose project %s: %w", pr.Name, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, r.abort(ctx, err)
	}
	if err := waitHealthy(ctx, runID, r.logDir, p.WaitTimeout); err != nil {
		return nil, r.abort(ctx, err)
	}
	r.Healthy = time.Since(start)
	return r, nil
}

// compose runs one compose command, its output appended to the project's log.
func (r *Running) compose(ctx context.Context, project, file, logName string, args ...string) error {
	logPath := filepath.Join(r.logDir, project+"-"+logName+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening %s: %w", logPath, err)
	}
	defer f.Close()
	cmd := r.tool.command(ctx, project, file, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	fmt.Fprintf(f, "$ %s -p %s -f %s %s\n", r.tool, project, file, strings.Join(args, " "))
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", r.tool, args[0], ctx.Err())
		}
		return fmt.Errorf("%s %s: %w; its output: %s", r.tool, args[0], err, tail(logPath, 15))
	}
	return nil
}

// abort tears down after a failed or cancelled start and returns the cause,
// with any teardown failure joined to it.
func (r *Running) abort(ctx context.Context, cause error) error {
	down := r.Down
	if ctx.Err() != nil {
		down = r.Abort
	}
	if derr := down(ctx); derr != nil {
		return errors.Join(cause, fmt.Errorf("tearing down after the failed start: %w", derr))
	}
	return cause
}

// Down keeps each container's log, stops the run's containers (SIGTERM,
// then SIGKILL after 5 s), removes them with their networks and volumes, and
// then proves, by the run's label, that nothing of the run remains. It runs
// on a fresh context so that a cancelled run still cleans up. It works by
// label rather than through `compose down`: the Python compose CLI alone
// takes seconds to start on a busy runner, and the label also finds what a
// start killed half-way created.
func (r *Running) Down(ctx context.Context) error {
	return r.teardown(ctx, true)
}

// Abort is Down for a cancelled run: the logs are kept and the same proof
// is made, but the containers are killed and removed in one step (docker
// rm -f) instead of being stopped first. The runner kills a cancelled step
// 10 s after its SIGINT, nothing is measured any more, and on a busy
// 2-core runner each docker CLI call takes up to 0.7 s: the graceful stop
// cost two of them, and up to 5 s for a service that ignores SIGTERM.
// Abort does not give the services a chance to flush anything.
func (r *Running) Abort(ctx context.Context) error {
	return r.teardown(ctx, false)
}

func (r *Running) teardown(ctx context.Context, graceful bool) error {
	if r.down {
		return nil
	}
	r.down = true
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	r.saveLogs(dctx)
	if graceful {
		if ids, err := docker(dctx, "ps", "-q", "--filter", "label="+RunLabel+"="+r.RunID); err == nil && len(strings.Fields(ids)) > 0 {
			// Errors here are left to the sweep, which removes by force.
			_, _ = docker(dctx, append([]string{"stop", "-t", "5"}, strings.Fields(ids)...)...)
		}
	}
	return DownByLabel(dctx, r.RunID)
}

// logFormat is what saveLogs lists of each container: its id, project and
// service-number, in one docker CLI call for the whole run.
const logFormat = `{{.ID}} {{.Label "com.docker.compose.project"}} {{.Label "com.docker.compose.service"}}-{{.Label "com.docker.compose.container-number"}}`

// saveLogs keeps each container's output as <logDir>/<project>/<service>.log
// (docker logs: the Python compose CLI takes seconds to start on a busy
// runner, and teardown waits for this). One listing for the whole run and
// the logs side by side: a cancelled run's teardown has seconds, and each
// docker CLI call takes up to 0.7 s on a busy 2-core runner.
func (r *Running) saveLogs(ctx context.Context) {
	out, err := docker(ctx, "ps", "-a", "--filter", "label="+RunLabel+"="+r.RunID, "--format", logFormat)
	if err != nil {
		return // nothing started, nothing to keep
	}
	mine := map[string]bool{}
	for _, pr := range r.Projects {
		mine[pr.Name] = true
	}
	var wg sync.WaitGroup
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || !mine[f[1]] {
			continue
		}
		id, project, name := f[0], f[1], f[2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			saveLog(ctx, id, filepath.Join(r.logDir, project, name+".log"))
		}()
	}
	wg.Wait()
}

// saveLog writes one container's output, with timestamps, to path.
func saveLog(ctx context.Context, id, path string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "docker", "logs", "--timestamps", id)
	cmd.Stdout, cmd.Stderr = f, f
	_ = cmd.Run()
}

// LogDir is where the run's compose files and logs are kept.
func (r *Running) LogDir() string { return r.logDir }

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
