// Package armdbtest gives other packages' tests a real PostgreSQL: one
// server per test binary, started by the first test that asks and stopped
// after the binary's last test, and databases of each test's own on it.
// An initdb costs 1-4 s on the 2-core machine; a CREATE DATABASE costs
// tens of milliseconds.
//
// A package that uses it runs its tests through Main (or wraps its own
// TestMain's testing.M with Tests), so the shared server is stopped when
// the binary ends: a server outliving its test process would be a leak.
package armdbtest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/testtier"
)

// quietSettings are the test server's PostgreSQL parameters: autovacuum
// off, because its workers commit in every database they visit (about two
// commits a visit) and a test asserting an arm's exact count must see only
// the arm's; fsync off, because the machine's disk is shared by every test
// suite running at once. The gate's own store keeps PostgreSQL's defaults.
func quietSettings() map[string]string {
	return map[string]string{"autovacuum": "off", "fsync": "off"}
}

var (
	mainRuns atomic.Bool // Main (or Tests) runs this binary's tests
	shared   struct {
		sync.Mutex
		srv *armdb.Server
		dir string
	}
	serial atomic.Int64 // numbers Database's names within the binary
)

// Main runs m's tests and then stops the binary's shared server, if a test
// started it, returning m's exit code (with 1 when the server would not
// stop): func TestMain(m *testing.M) { os.Exit(armdbtest.Main(m)) }.
func Main(m interface{ Run() int }) int {
	mainRuns.Store(true)
	code := m.Run()
	if err := stopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "armdbtest:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// Tests wraps m for a TestMain that hands its testing.M to another
// helper's runner (exampleservice.RunTests): that runner's m.Run() then
// runs through Main.
func Tests(m interface{ Run() int }) interface{ Run() int } { return runner{m} }

type runner struct{ m interface{ Run() int } }

func (r runner) Run() int { return Main(r.m) }

// Server returns the binary's shared server, starting it on first use.
// Its databases belong to the tests that made them (Start, Database).
func Server(t testing.TB) *armdb.Server {
	t.Helper()
	testtier.Heavy(t, testtier.Postgres)
	if !mainRuns.Load() {
		t.Fatal("armdbtest: this package's tests do not run through armdbtest.Main, so the shared PostgreSQL would outlive the test binary; add func TestMain(m *testing.M) { os.Exit(armdbtest.Main(m)) } (or wrap m with armdbtest.Tests)")
	}
	shared.Lock()
	defer shared.Unlock()
	if shared.srv != nil {
		return shared.srv
	}
	dir, err := os.MkdirTemp("", "armdbtest-")
	if err != nil {
		t.Fatalf("armdbtest: a folder for the shared PostgreSQL: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := armdb.Start(ctx, armdb.Options{Dir: dir, TLS: true, Settings: quietSettings()})
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("starting PostgreSQL for the tests (needs initdb and postgres 15 on PATH or under /usr/lib/postgresql/15/bin, and a postgres system user when run as root; apt-get install postgresql): %v", err)
	}
	t.Logf("armdbtest: %s started in %s, shared by this binary's tests", s, s.StartTime().Round(time.Millisecond))
	shared.srv, shared.dir = s, dir
	return s
}

func stopShared() error {
	shared.Lock()
	defer shared.Unlock()
	if shared.srv == nil {
		return nil
	}
	err := shared.srv.Stop()
	os.RemoveAll(shared.dir)
	shared.srv = nil
	return err
}

// Start gives t the databases dbs, by these exact names, on the binary's
// shared server (PostgreSQL over TLS), dropped in t's Cleanup; the
// server's log tail is logged when t fails. Two tests of one binary
// running at once must ask for different names (Database makes a unique
// one). A missing PostgreSQL fails t in the full suite; -short skips it.
func Start(t testing.TB, dbs ...string) *armdb.Server {
	t.Helper()
	s := Server(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.AddDatabases(ctx, dbs...); err != nil {
		t.Fatalf("armdbtest: %v (is another test of this binary using the same name at once?)", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if b, err := os.ReadFile(s.LogFile()); err == nil {
				t.Logf("armdbtest: postgres log tail:\n%s", lastLines(string(b), 30))
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DropDatabases(ctx, dbs...); err != nil {
			t.Errorf("armdbtest: %v", err)
		}
	})
	return s
}

// Database gives t a fresh database named prefix_N on the shared server
// and returns its URL; it is dropped in t's Cleanup.
func Database(t testing.TB, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s_%d", prefix, serial.Add(1))
	return Start(t, name).DSN(name)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
