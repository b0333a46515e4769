// Package arms starts the two builds a gate compares (the arms), waits until
// each is ready, samples the CPU time and resident memory of each arm's whole
// process tree from /proc while it runs, and stops it: SIGTERM to its process
// group, SIGKILL after a grace period, nothing left running.
package arms

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/redact"
)

// Spec describes one arm.
type Spec struct {
	// Name labels the arm in messages ("base", "head").
	Name string
	// Command is the argv; Command[0] is looked up in PATH.
	Command []string
	// Env holds KEY=VALUE entries added to a minimal inherited environment
	// (see MinimalEnv); an entry here wins over an inherited one.
	Env []string
	// Dir is the working directory; empty means perfgate's own.
	Dir string
	// LogPath receives the arm's stdout and stderr (truncated at start). Empty
	// means a new file under the system temp dir.
	LogPath string
	// Ready is an http(s) URL polled with GET until it answers 2xx, or
	// tcp://host:port dialled until it accepts. Empty: ready once started.
	Ready string
	// ReadyTimeout bounds the wait for Ready (default 60s).
	ReadyTimeout time.Duration
	// Grace is how long Stop waits after SIGTERM before SIGKILL (default 10s).
	Grace time.Duration
	// SampleEvery is the memory and CPU sampling period (default 100ms).
	SampleEvery time.Duration
	// Redact holds the secrets an arm may print (a service that logs its
	// requests logs their tokens): its output passes through them before
	// it reaches LogPath, so the log, its printed tail and any artifact
	// made of it are clean. Nil: the output goes to the file directly.
	Redact *redact.Set
}

// Defaults applied to a zero field of Spec.
const (
	DefaultReadyTimeout = 60 * time.Second
	DefaultGrace        = 10 * time.Second
	DefaultSampleEvery  = 100 * time.Millisecond
)

// CanceledGrace caps Grace once Start's ctx is done (SIGINT or SIGTERM to
// perfgate): the run must end within 2 s, whatever an arm does with its
// SIGTERM.
const CanceledGrace = time.Second

// Process is one running build. All methods are safe for concurrent use.
type Process struct {
	ctx     context.Context // Start's; once done, Stop waits CanceledGrace at most
	spec    Spec
	cmd     *exec.Cmd
	log     *os.File
	logPath string
	root    procKey
	pgid    int

	exited  chan struct{} // closed once the root process is reaped
	stopped chan struct{} // closed once stop has finished
	quit    chan struct{} // closed by stop: the sampler ends
	sampler sync.WaitGroup
	watch   chan struct{} // closed when the ctx watcher has ended
	copied  chan struct{} // closed when the redacting copier has drained (nil: none)

	stopOnce sync.Once
	stopErr  error

	mu        sync.Mutex
	stopping  bool  // exit caused by Stop, not a failure
	exitCause error // how the root exited on its own ("exit status 3")
	cpuMax    time.Duration
	lost      int64                // ticks of members that left the tree unreaped by it
	seen      map[procKey]procStat // the tree at the last snapshot
	ever      map[procKey]procStat // every member seen and still running (stop.go)
	cookie    string               // NAME=VALUE in every member's environment (stop.go)
	peak      int64                // sampled tree RSS peak in the current window
	hwmOK     bool                 // root's VmHWM was reset for this window
	lastRSS   int64
	rootGone  bool
}

// Start starts the arm and returns once it is ready. An arm that exits
// before it is ready, or is not ready within ReadyTimeout, is stopped (its
// whole process group) and reported as exit 2 with the tail of its log.
// ctx bounds the arm's whole life: when it ends the arm is stopped as by Stop.
func Start(ctx context.Context, s Spec) (*Process, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if s.ReadyTimeout <= 0 {
		s.ReadyTimeout = DefaultReadyTimeout
	}
	if s.Grace <= 0 {
		s.Grace = DefaultGrace
	}
	if s.SampleEvery <= 0 {
		s.SampleEvery = DefaultSampleEvery
	}
	probe, err := parseReady(s.Name, s.Ready)
	if err != nil {
		return nil, err
	}
	log, logPath, err := openLog(s)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	cmd.Dir = s.Dir
	cookie := newCookie(s.Name)
	cmd.Env = append(append(MinimalEnv(os.Getenv), s.Env...), cookie)
	cmd.Stdout, cmd.Stderr = log, log // an *os.File: children write to it directly, no copying goroutine
	var out *logPipe
	if !s.Redact.Empty() {
		if out, err = newLogPipe(s.Redact, log); err != nil {
			log.Close()
			return nil, exit.Refusef("arm %s: making the pipe of its log: %w", s.Name, err)
		}
		cmd.Stdout, cmd.Stderr = out.w, out.w
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Its own process group, so one signal reaches every descendant.
		Setpgid: true,
		// If perfgate itself is killed, the arm's root does not outlive it.
		// (The kernel ties this to the forking thread; the Go runtime ends a
		// thread only when a goroutine exits while locked to it, which
		// perfgate never does: internal/armdb's server goroutines unlock
		// once their program has exited.)
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		if out != nil {
			out.abandon()
		}
		log.Close()
		if s.LogPath == "" {
			os.Remove(logPath) // ours, and empty
		}
		return nil, exit.Refusef("starting arm %s (%s): %w", s.Name, strings.Join(s.Command, " "), err)
	}
	a := &Process{
		spec: s, ctx: ctx, cmd: cmd, log: log, logPath: logPath, pgid: cmd.Process.Pid,
		exited: make(chan struct{}), stopped: make(chan struct{}), quit: make(chan struct{}),
		watch: make(chan struct{}), seen: map[procKey]procStat{}, ever: map[procKey]procStat{}, cookie: cookie,
	}
	if out != nil {
		// The arm's tree holds the write end now; the copier ends at its
		// last close, or shortly after Stop when a stray holds it open.
		a.copied = out.done
		a.sampler.Add(1)
		go func() {
			defer a.sampler.Done()
			out.copy(a.quit)
		}()
	}
	a.root = procKey{pid: cmd.Process.Pid}
	if p, ok := readStat(a.root.pid); ok {
		a.root.start = p.start
	}
	a.hwmOK = resetHWM(a.root.pid)
	go a.wait()
	a.sampler.Add(1)
	go a.sample(ctx)
	go func() {
		defer close(a.watch)
		select {
		case <-ctx.Done():
			a.stopOnce.Do(a.stop)
		case <-a.stopped:
		}
	}()

	if err := a.waitReady(ctx, probe); err != nil {
		_ = a.Stop()
		return nil, err
	}
	return a, nil
}

func (s Spec) check() error {
	if s.Name == "" {
		return exit.Refusef("an arm needs a name (Spec.Name)")
	}
	if len(s.Command) == 0 || s.Command[0] == "" {
		return exit.Refusef("arm %s: no command given: name the program and its arguments", s.Name)
	}
	for i, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return exit.Refusef("arm %s: environment entry %d %q is not KEY=VALUE", s.Name, i+1, kv)
		}
	}
	return nil
}

func openLog(s Spec) (*os.File, string, error) {
	if s.LogPath == "" {
		f, err := os.CreateTemp("", "perfgate-arm-"+sanitize(s.Name)+"-*.log")
		if err != nil {
			return nil, "", exit.Refusef("arm %s: creating its log file: %w", s.Name, err)
		}
		return f, f.Name(), nil
	}
	if err := os.MkdirAll(filepath.Dir(s.LogPath), 0o755); err != nil {
		return nil, "", exit.Refusef("arm %s: creating the folder of its log %s: %w", s.Name, s.LogPath, err)
	}
	f, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o644)
	if err != nil {
		return nil, "", exit.Refusef("arm %s: opening its log %s: %w", s.Name, s.LogPath, err)
	}
	return f, s.LogPath, nil
}

func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == '*' {
			return '_'
		}
		return r
	}, name)
}

// wait reaps the root and records why it ended.
func (a *Process) wait() {
	err := a.cmd.Wait()
	a.mu.Lock()
	a.rootGone = true
	if st := a.cmd.ProcessState; st != nil {
		// The rusage of a reaped child covers it and every descendant it
		// reaped, so it is the final word on the tree's CPU.
		if total := st.UserTime() + st.SystemTime() + ticks(a.lost); total > a.cpuMax {
			a.cpuMax = total
		}
	}
	if !a.stopping {
		if err == nil {
			err = errors.New("exit status 0")
		}
		a.exitCause = err
	}
	a.mu.Unlock()
	close(a.exited)
}

// Done is closed once the arm's process has exited, for any reason.
func (a *Process) Done() <-chan struct{} { return a.exited }

// Err says why the arm exited when it exited on its own (exit 2, with the
// tail of its log); nil while it runs or when Stop ended it.
func (a *Process) Err() error { return a.exitError("while it should be serving") }

func (a *Process) exitError(when string) error {
	a.mu.Lock()
	cause := a.exitCause
	a.mu.Unlock()
	if cause == nil {
		return nil
	}
	return exit.Refusef("arm %s exited %s (%v); last lines of its log %s:\n%s",
		a.spec.Name, when, cause, a.logPath, indent(a.LogTail(20)))
}

// PID is the arm's root process id (also its process group id).
func (a *Process) PID() int { return a.root.pid }

// LogPath is the file holding the arm's stdout and stderr.
func (a *Process) LogPath() string { return a.logPath }

// LogTail returns the last n lines of the arm's log. Once the arm has
// exited it first lets the redacting copier write what the arm left in the
// pipe, so the tail holds the arm's last words.
func (a *Process) LogTail(n int) string {
	if a.copied != nil {
		select {
		case <-a.exited:
			t := time.NewTimer(drainWait)
			select {
			case <-a.copied:
			case <-t.C:
			}
			t.Stop()
		default:
		}
	}
	return tailFile(a.logPath, n)
}

func indent(s string) string {
	if s == "" {
		return "    (the log is empty)"
	}
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
