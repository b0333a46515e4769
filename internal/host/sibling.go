package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// Variables a sibling container is told about itself.
const (
	// SiblingEnv marks the process as the sibling already: it never
	// re-runs itself again.
	SiblingEnv = "PERFGATE_SIBLING"
	// ParentEnv names the container the sibling was started from; the
	// sibling stops when that container goes away.
	ParentEnv = "PERFGATE_PARENT_CONTAINER"
	// SiblingLabel is on every sibling, with the workflow run as value.
	SiblingLabel = "perfgate.sibling"
	// ParentLabel names the container a sibling was started from.
	ParentLabel = "perfgate.parent"
)

// Sibling is a container of the same image as Parent, run beside it on
// the host's network. It sees every mount of Parent twice: at the path
// Parent sees (so the values the runner rewrote into container paths stay
// valid) and at the host path (so every path perfgate hands the docker
// engine, a compose file's bind mount or a build's tree, means the same on
// the host). The working directory and every environment value that
// starts with a mounted path are moved to the host paths.
type Sibling struct {
	Parent *Container
	Name   string
	// Label is the value of SiblingLabel: the workflow run it serves.
	Label string
	// Args follow the image: the entrypoint's arguments.
	Args []string
	// Dir is the parent's working directory.
	Dir string
	// Env is the parent's environment, NAME=VALUE.
	Env            []string
	Stdout, Stderr io.Writer
	// Grace is how long a stopped sibling may take to tear down what it
	// started before it is killed; 0 means SiblingGrace.
	Grace time.Duration
}

// SiblingGrace is how long a cancelled step's sibling may tear down before
// it is killed: the runner sends the step SIGINT, SIGTERM 7.5 s later and
// kills it 2.5 s after that, and killing the `docker run` client does not
// stop a container, so the sibling must be gone, killed and removed, well
// within the 10 s: 7 s of teardown from the cancel, then about a second to
// kill and remove it (docker rm -f, one call) and for the action to exit.
const SiblingGrace = 7 * time.Second

// systemPaths are the image's own folders: a host folder mounted at its
// own path must never hide them.
var systemPaths = []string{"/bin", "/sbin", "/lib", "/lib64", "/usr", "/etc", "/proc", "/sys", "/dev", "/run"}

func systemPath(p string) bool {
	if p == "/" {
		return true
	}
	for _, s := range systemPaths {
		if p == s || strings.HasPrefix(p, s+"/") {
			return p != "/var/run/docker.sock" && p != "/run/docker.sock"
		}
	}
	return false
}

// skipEnv are variables each container has of its own.
var skipEnv = map[string]bool{"HOSTNAME": true, SiblingEnv: true, ParentEnv: true}

// Command is the docker CLI's arguments and environment. Values travel in
// the CLI's environment and only names on its command line (-e NAME), so
// no secret shows in the process list.
func (s *Sibling) Command() (args, env []string) {
	args = []string{"run", "--rm", "--name", s.Name, "--network", "host",
		"--label", SiblingLabel + "=" + s.Label, "--label", ParentLabel + "=" + s.Parent.ID}
	seen := map[string]bool{}
	mount := func(src, dst string, rw bool) {
		if seen[dst] {
			return
		}
		seen[dst] = true
		v := src + ":" + dst
		if !rw {
			v += ":ro"
		}
		args = append(args, "-v", v)
	}
	for _, m := range s.Parent.Mounts {
		switch m.Type {
		case "bind":
			mount(m.Source, m.Destination, m.RW)
			if !systemPath(m.Source) {
				mount(m.Source, m.Source, m.RW)
			}
		case "volume":
			mount(m.Name, m.Destination, m.RW)
		}
	}
	dir := s.Dir
	if p, ok := s.Parent.HostPath(dir); ok {
		dir = p
	}
	args = append(args, "--workdir", dir)
	var names []string
	for _, kv := range s.Env {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || skipEnv[name] {
			continue
		}
		if strings.HasPrefix(value, "/") {
			if p, ok := s.Parent.HostPath(value); ok {
				value = p
			}
		}
		env = append(env, name+"="+value)
		names = append(names, name)
	}
	env = append(env, SiblingEnv+"=1", ParentEnv+"="+s.Parent.ID)
	names = append(names, SiblingEnv, ParentEnv)
	sort.Strings(names)
	for _, n := range names {
		args = append(args, "-e", n)
	}
	args = append(args, s.Parent.Image)
	args = append(args, s.Args...)
	return args, env
}

// Run runs the sibling to its end and returns its exit code. When ctx is
// cancelled (the step was cancelled: the runner signalled the action) the
// sibling gets SIGTERM, so it tears down what it started, and is killed
// Grace after the cancel; it is removed in every case.
func (s *Sibling) Run(ctx context.Context) (int, error) {
	args, env := s.Command()
	s.remove() // a sibling of that name that an earlier crash left
	cmd := exec.Command("docker", args...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = s.Stdout, s.Stderr
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting the action's sibling container: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	gone := false
	defer func() {
		if !gone {
			s.remove()
		}
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		grace := s.Grace
		if grace == 0 {
			grace = SiblingGrace
		}
		// Counted from the cancel, not from the end of the docker call
		// below, which alone takes up to 0.7 s on a busy runner.
		killAt := time.After(grace)
		s.docker("kill", "--signal", "TERM", s.Name)
		select {
		case err = <-done:
			// The client returns the sibling's own exit code only once
			// --rm has removed it; the runner's kill is seconds away, and
			// one more docker call would take up to 0.7 s of them.
			var ee *exec.ExitError
			gone = err == nil || errors.As(err, &ee) && ee.ExitCode() < 125
		case <-killAt:
			// One call kills and removes it.
			s.remove()
			gone = true
			err = <-done
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("running the action's sibling container: %w", err)
	}
	return 0, nil
}

// remove makes sure the sibling is gone even when its --rm could not run
// (the engine lost the CLI's connection).
func (s *Sibling) remove() {
	s.docker("rm", "--force", s.Name)
}

func (s *Sibling) docker(args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	_ = cmd.Run() // "no such container" once it is gone is the expected answer
}

// WatchParent cancels the returned context when the container named by
// ParentEnv exits (`docker wait` returns), so a sibling whose action was
// killed before it could pass the signal on still tears down. Outside a
// sibling it returns ctx and a no-op.
func WatchParent(ctx context.Context, getenv func(string) string) (context.Context, func()) {
	parent := getenv(ParentEnv)
	if getenv(SiblingEnv) != "1" || parent == "" {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, "docker", "wait", parent)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		return ctx, cancel
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = cmd.Wait()
		cancel()
	}()
	return ctx, func() {
		cancel()
		<-done
	}
}
