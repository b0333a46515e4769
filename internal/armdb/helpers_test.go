package armdb

import (
	"bytes"
	"context"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// startServer starts a server for one test and stops it in Cleanup, even
// when the test fails; it fails the test when PostgreSQL is missing.
func startServer(t *testing.T, o Options) *Server {
	t.Helper()
	testtier.Heavy(t, testtier.Postgres)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	s, err := Start(ctx, o)
	if err != nil {
		t.Fatalf("starting PostgreSQL (needs initdb and postgres 15 on PATH or under /usr/lib/postgresql/15/bin, and a postgres system user when run as root): %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("postgres log tail:\n%s", tail(s.LogFile(), 0, 30))
		}
		if err := s.Stop(); err != nil {
			t.Errorf("stopping the store: %v", err)
		}
	})
	return s
}

// quiet are the settings of the tests' servers: no autovacuum, whose
// workers commit in every database they visit (the counter tests need counts
// only they move), and no fsync, which spares a machine shared by several
// test suites the disk flushes of every CREATE DATABASE and commit.
func quiet() map[string]string {
	return map[string]string{"autovacuum": "off", "fsync": "off"}
}

// serverDir is a Dir the postgres system user can reach (t.TempDir() is
// root-only), so the server's runtime folder lands inside it where a test
// can watch it.
func serverDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "perfgate-store-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs the postgres system user (apt-get install postgresql): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(d, uid, gid); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// processesMentioning lists the processes whose command line holds s: a
// postmaster keeps "-D <data dir>" in its command line.
func processesMentioning(t *testing.T, s string) []int {
	t.Helper()
	var pids []int
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("listing processes: %v", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func pidAlive(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}
