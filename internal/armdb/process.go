package armdb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"syscall"
)

// binaries are the server programs of one PostgreSQL installation. initdb
// and postgres must come from the same version, so postgres is taken from
// initdb's own directory.
type binaries struct {
	initdb, postgres string
}

const installHint = "install the PostgreSQL server (Debian/Ubuntu: apt-get install postgresql) so initdb and postgres are on PATH or under /usr/lib/postgresql/<version>/bin"

func findBinaries() (binaries, error) {
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		// Debian keeps the server programs off PATH.
		found, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
		sort.Slice(found, func(i, j int) bool { return versionOf(found[i]) > versionOf(found[j]) })
		if len(found) == 0 {
			return binaries{}, fmt.Errorf("finding PostgreSQL's initdb: not on PATH nor under /usr/lib/postgresql: %s", installHint)
		}
		initdb = found[0]
	}
	if real, err := filepath.EvalSymlinks(initdb); err == nil {
		initdb = real
	}
	postgres := filepath.Join(filepath.Dir(initdb), "postgres")
	if _, err := os.Stat(postgres); err != nil {
		return binaries{}, fmt.Errorf("finding postgres beside %s: %w: %s", initdb, err, installHint)
	}
	return binaries{initdb: initdb, postgres: postgres}, nil
}

func versionOf(initdb string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return v
}

// serverUser is whom initdb and postgres run as: ourselves, or the postgres
// system user when we are root, since PostgreSQL refuses to run as root.
type serverUser struct {
	cred     *syscall.Credential // nil: run as ourselves
	uid, gid int
}

func currentServerUser() (serverUser, error) {
	if os.Geteuid() != 0 {
		return serverUser{uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return serverUser{}, fmt.Errorf("running as root, PostgreSQL must run as the postgres system user, which is missing (%w): %s, or run as another user", err, installHint)
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return serverUser{}, fmt.Errorf("reading the postgres user's ids: %w", err)
	}
	// Groups empty (not nil with NoSetGroups) drops root's supplementary
	// groups, so the server holds nothing of root's.
	return serverUser{
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
		uid:  uid, gid: gid,
	}, nil
}

// own hands path to the server user; a no-op when that is ourselves.
func (u serverUser) own(path string) error {
	if u.cred == nil {
		return nil
	}
	if err := os.Lchown(path, u.uid, u.gid); err != nil {
		return fmt.Errorf("handing %s to the postgres user: %w", path, err)
	}
	return nil
}

// canReach says whether the server user can walk down to dir: every
// directory on the way needs search (x) permission for it.
func (u serverUser) canReach(dir string) bool {
	if u.cred == nil {
		return true
	}
	for p := dir; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return false
		}
		mode := fi.Mode().Perm()
		var x bool
		switch {
		case int(st.Uid) == u.uid:
			x = mode&0o100 != 0
		case int(st.Gid) == u.gid:
			x = mode&0o010 != 0
		default:
			x = mode&0o001 != 0
		}
		if !x {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}

// command builds a server program's command line with a clean
// environment: PG* variables of ours (PGDATA, PGPORT, ...) must not steer it.
func (u serverUser) command(path string, args []string, dir string, out io.Writer, deathSignal syscall.Signal) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Dir = dir // the server user must be able to stand in its cwd
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C", "LANG=C", "HOME=" + dir}
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: u.cred,
		// Its own process group lets Stop kill the postmaster and its
		// children at once when an immediate shutdown does not end them.
		Setpgid: true,
		// A test binary killed by a timeout runs no Cleanup; the death
		// signal still ends the server. Go sets it after changing the
		// credentials, so the setuid does not clear it.
		Pdeathsig: deathSignal,
	}
	return cmd
}

// proc is a started server program. Its goroutine holds its OS thread for
// the life of the process, because the death signal fires when the thread
// that forked the process exits, not when our whole process does: a thread
// the Go runtime retired would otherwise kill a healthy server. It gives
// the thread back once the process has exited, for the same reason.
type proc struct {
	pid  int
	done chan struct{} // closed once the process has exited and is reaped
	err  error         // its exit, readable after done
}

func startProc(cmd *exec.Cmd) (*proc, error) {
	p := &proc{done: make(chan struct{})}
	started := make(chan error, 1)
	go func() {
		// Locked while the process lives, so no other goroutine can end
		// this thread under it; unlocked, not left to end with the
		// goroutine, once it has exited. A goroutine that ends locked ends
		// its thread, and the thread may have forked other children
		// before this goroutine took it (the runtime reuses threads):
		// their death signals fired, and an arm of a gate beside this one
		// got SIGKILL mid-pair when its neighbour's initdb ended
		// (TestStartProcKeepsOtherChildrenAlive).
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		p.pid = cmd.Process.Pid
		started <- nil
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// killGroup ends the process and everything in its group at once.
func (p *proc) killGroup() {
	_ = syscall.Kill(-p.pid, syscall.SIGKILL)
}

// children lists the live processes whose parent is pid. A postmaster puts
// each child in a session of its own (setsid), so its process group alone
// does not reach them.
func children(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var kids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// After the parenthesised command name: state ppid ...
		rest := b[bytes.LastIndexByte(b, ')')+1:]
		f := bytes.Fields(rest)
		if len(f) > 1 && string(f[1]) == strconv.Itoa(pid) {
			kids = append(kids, child)
		}
	}
	return kids
}

// tail is the end of a log file from offset on, for an error message.
func tail(path string, offset int64, maxLines int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if offset > 0 && offset <= int64(len(b)) {
		b = b[offset:]
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > maxLines {
		lines = lines[len(lines)-maxLines:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
