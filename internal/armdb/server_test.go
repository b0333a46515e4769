package armdb

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/testtier"
)

// TestServer runs every check that needs a healthy server against one, to
// keep the package's tests to one initdb each where a fresh one matters.
// Autovacuum is off: its workers commit in every database they visit, and
// the counter tests need counts only they move.
func TestServer(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	t.Parallel()
	dbs := []string{"perf_base", "perf_head", "count_closed", "count_idle", "count_busy", "probe"}
	s := startServer(t, Options{Dir: t.TempDir(), Databases: dbs, TLS: true, Settings: quiet()})
	t.Logf("store: start took %s (initdb %s, postgres ready %s, %d databases %s)",
		s.took.total.Round(time.Millisecond), s.took.initdb.Round(time.Millisecond),
		s.took.ready.Round(time.Millisecond), len(dbs), s.took.databases.Round(time.Millisecond))
	t.Run("arms' databases over TLS", func(t *testing.T) { t.Parallel(); testArmsDatabasesOverTLS(t, s) })
	t.Run("counter counts an arm's commits", func(t *testing.T) { testCounterCountsArmCommits(t, s) })
	t.Run("probe does not inflate", func(t *testing.T) { t.Parallel(); testProbeDoesNotInflate(t, s) })
	t.Run("table writes", func(t *testing.T) { t.Parallel(); testTableWrites(t, s) })
}

func testArmsDatabasesOverTLS(t *testing.T, s *Server) {
	ctx := context.Background()

	for _, db := range []string{"perf_base", "perf_head"} {
		t.Run(db, func(t *testing.T) {
			conn, err := pgx.Connect(ctx, s.DSN(db))
			if err != nil {
				t.Fatalf("connecting to %s with its DSN: %v", db, err)
			}
			defer conn.Close(ctx)
			var cur, version string
			var ssl bool
			err = conn.QueryRow(ctx, `SELECT current_database(), s.ssl, coalesce(s.version, '')
				FROM pg_stat_ssl s WHERE s.pid = pg_backend_pid()`).Scan(&cur, &ssl, &version)
			if err != nil {
				t.Fatalf("reading pg_stat_ssl: %v", err)
			}
			if cur != db || !ssl {
				t.Fatalf("connected to %q with ssl=%v, want %q with ssl=true", cur, ssl, db)
			}
			t.Logf("%s: ssl=%v %s", cur, ssl, version)
		})
	}

	t.Run("plain TCP refused", func(t *testing.T) {
		plain := strings.Replace(s.DSN("perf_head"), "sslmode=verify-full", "sslmode=disable", 1)
		conn, err := pgx.Connect(ctx, plain)
		if err == nil {
			conn.Close(ctx)
			t.Fatal("a connection without TLS was accepted")
		}
		if !strings.Contains(err.Error(), "no pg_hba.conf entry") {
			t.Fatalf("refusal = %v, want no pg_hba.conf entry", err)
		}
	})

	t.Run("another CA refused", func(t *testing.T) {
		// verify-full must verify: a server not signed by the run's CA fails.
		other, err := newRunCerts(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		ca := filepath.Join(t.TempDir(), "other.pem")
		if err := os.WriteFile(ca, other.caPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		dsn := strings.Replace(s.DSN("perf_head"), escapeQuery(s.CAFile()), escapeQuery(ca), 1)
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			conn.Close(ctx)
			t.Fatal("a server certificate from another CA was trusted")
		}
		if !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("refusal = %v, want a certificate error", err)
		}
	})

	t.Run("WriteDSN", func(t *testing.T) {
		dir := t.TempDir()
		path, err := s.WriteDSN("perf_base", dir)
		if err != nil {
			t.Fatal(err)
		}
		if path != filepath.Join(dir, "store.dsn") {
			t.Fatalf("path = %s, want %s", path, filepath.Join(dir, "store.dsn"))
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Fatalf("store.dsn mode = %v, want 0600", fi.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != s.DSN("perf_base") {
			t.Fatal("store.dsn does not hold the database's DSN")
		}
		conn, err := pgx.Connect(ctx, string(b))
		if err != nil {
			t.Fatalf("connecting with store.dsn: %v", err)
		}
		conn.Close(ctx)
		if _, err := s.WriteDSN("perf_nope", dir); err == nil || !strings.Contains(err.Error(), `no database "perf_nope"`) {
			t.Fatalf("WriteDSN of an unknown database: err = %v", err)
		}
	})
}

func TestStopLeavesNothing(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	t.Parallel()
	ctx := context.Background()
	dir := serverDir(t)
	s := startServer(t, Options{Dir: dir, Databases: []string{"perf_head"}, NoTLS: true, Settings: quiet()})

	// An arm still connected must not hold Stop up: fast shutdown ends it.
	conn, err := pgx.Connect(ctx, s.DSN("perf_head"))
	if err != nil {
		t.Fatalf("connecting without TLS (NoTLS): %v", err)
	}
	var ssl bool
	if err := conn.QueryRow(ctx, "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&ssl); err != nil || ssl {
		t.Fatalf("NoTLS connection: ssl=%v err=%v, want ssl=false", ssl, err)
	}
	defer conn.Close(ctx)

	pid, runtimeDir, dataDir := s.PID(), s.runtime, s.dataDir
	kids := children(pid) // checkpointer, walwriter, ..., the session's backend
	if !pidAlive(pid) || len(kids) < 2 {
		t.Fatalf("postmaster %d alive=%v with children %v before Stop", pid, pidAlive(pid), kids)
	}
	began := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	t.Logf("store: Stop took %s with a session open", time.Since(began).Round(time.Millisecond))

	if pidAlive(pid) {
		t.Errorf("postmaster %d still exists after Stop", pid)
	}
	for _, k := range kids {
		if pidAlive(k) {
			t.Errorf("the server's child %d remains after Stop", k)
		}
	}
	if m := processesMentioning(t, runtimeDir); len(m) > 0 {
		t.Errorf("processes %v still name the data dir after Stop", m)
	}
	for _, p := range []string{dataDir, runtimeDir} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s remains after Stop (stat: %v)", p, err)
		}
	}
	if _, err := os.Stat(s.LogFile()); err != nil {
		t.Errorf("the server's log should stay in Dir for the report: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("a second Stop: %v", err)
	}
	if c, err := pgx.Connect(ctx, s.DSN("perf_head")); err == nil {
		c.Close(ctx)
		t.Error("the server still answers after Stop")
	}
}

func TestFailedStartLeavesNothing(t *testing.T) {
	testtier.Heavy(t, testtier.Postgres)
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { taken.Close() }) // held until the parallel subtests end
	takenPort := taken.Addr().(*net.TCPAddr).Port

	tests := []struct {
		name    string
		opts    Options
		cancel  bool // cancel Start once the postmaster is running
		wantErr string
	}{
		{name: "port taken", opts: Options{Port: takenPort}, wantErr: "127.0.0.1:" + strconv.Itoa(takenPort) + " is taken"},
		{name: "setting postgres refuses", opts: Options{Settings: map[string]string{"shared_buffers": "lots"}}, wantErr: `invalid value for parameter "shared_buffers"`},
		{name: "cancelled once running", cancel: true, wantErr: "context canceled"},
		{name: "bad database name", opts: Options{Databases: []string{"perf-head"}}, wantErr: `database name "perf-head"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := serverDir(t)
			o := tc.opts
			o.Dir = dir
			if o.Settings == nil {
				o.Settings = quiet()
			}
			if o.Databases == nil {
				o.Databases = []string{"perf_base", "perf_head"}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			postmaster := make(chan int, 1)
			if tc.cancel {
				go watchPostmaster(ctx, dir, postmaster, cancel)
			}
			s, err := Start(ctx, o)
			if err == nil {
				s.Stop()
				t.Fatal("Start succeeded")
			}
			if s != nil {
				t.Errorf("Start returned a server with its error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Start error = %v\nwant it to contain %q", err, tc.wantErr)
			}
			if m := processesMentioning(t, dir); len(m) > 0 {
				t.Errorf("processes %v still run in %s after the failed start", m, dir)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, "perfgate-pg-*")); len(left) > 0 {
				t.Errorf("the failed start left %v", left)
			}
			if tc.cancel {
				select {
				case pid := <-postmaster:
					if pidAlive(pid) {
						t.Errorf("postmaster %d outlived the cancelled start", pid)
					}
				default:
					t.Error("the postmaster never came up, so the cancellation was not tested")
				}
			}
		})
	}
}

// watchPostmaster cancels the start once a postmaster under dir has
// written its pid file, and passes that pid on.
func watchPostmaster(ctx context.Context, dir string, pid chan<- int, cancel context.CancelFunc) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		files, _ := filepath.Glob(filepath.Join(dir, "perfgate-pg-*", "data", "postmaster.pid"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			first, _, ok := strings.Cut(string(b), "\n")
			n, err := strconv.Atoi(first)
			if !ok || err != nil || n <= 0 {
				continue
			}
			pid <- n
			cancel()
			return
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		wantErr string
	}{
		{name: "defaults", opts: Options{}},
		{name: "two arms", opts: Options{Databases: []string{"perf_base", "perf_head"}, TLS: true}},
		{name: "upper case", opts: Options{Databases: []string{"Perf"}}, wantErr: `database name "Perf"`},
		{name: "too long", opts: Options{Databases: []string{strings.Repeat("a", 64)}}, wantErr: "at most 63"},
		{name: "reserved", opts: Options{Databases: []string{"template1"}}, wantErr: "PostgreSQL's own"},
		{name: "twice", opts: Options{Databases: []string{"a", "a"}}, wantErr: "named twice"},
		{name: "TLS and NoTLS", opts: Options{TLS: true, NoTLS: true}, wantErr: "both set"},
		{name: "port", opts: Options{Port: 70000}, wantErr: "out of range"},
		{name: "owned setting", opts: Options{Settings: map[string]string{"listen_addresses": "*"}}, wantErr: "decided by Start"},
		{name: "ssl setting", opts: Options{Settings: map[string]string{"ssl": "off"}}, wantErr: "decided by Start"},
		{name: "odd setting name", opts: Options{Settings: map[string]string{"a b": "1"}}, wantErr: "not a PostgreSQL parameter"},
		{name: "free setting", opts: Options{Settings: map[string]string{"autovacuum": "off"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.opts.validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("validate: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("validate = %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// AddDatabases makes databases on a running server as Start does, so it
// refuses the names Start refuses, before it connects: DSN puts a name in
// the URL's path as it is, and a name holding '?' or '#' made a DSN that
// names another database or does not parse. No server is needed to see
// the refusal.
func TestAddDatabasesRefusesWhatStartRefuses(t *testing.T) {
	tests := []struct {
		name    string
		dbs     []string
		wantErr string
	}{
		{name: "not an identifier", dbs: []string{"perf-head"}, wantErr: `database name "perf-head": use lower-case letters`},
		{name: "a query in the name", dbs: []string{"a?sslmode=disable"}, wantErr: `database name "a?sslmode=disable"`},
		{name: "PostgreSQL's own", dbs: []string{"postgres"}, wantErr: "PostgreSQL's own"},
		{name: "twice", dbs: []string{"perf_a", "perf_a"}, wantErr: "named twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s := &Server{}
			err := s.AddDatabases(ctx, tc.dbs...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("AddDatabases(%q) = %v, want a refusal containing %q", tc.dbs, err, tc.wantErr)
			}
			if got := s.Databases(); len(got) != 0 {
				t.Errorf("the refused names were recorded: %v", got)
			}
		})
	}
}
