package armdb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/host"
)

// superuser is the role initdb makes; every DSN logs in as it (see
// docs/armdb.md for why the arms are not given lesser roles).
const superuser = "perfgate"

// Timeouts of the server's life. Stop asks for an immediate shutdown: the
// data dir is removed right after, so a fast shutdown's checkpoint (every
// dirty page written and fsynced) is work thrown away, and on a busy disk
// it took seconds of the 7.5 s a runner gives a canceled job.
const (
	readyTimeout     = 60 * time.Second
	immediateTimeout = 10 * time.Second
)

// errPortTaken marks a start that lost its port to another process.
var errPortTaken = errors.New("port already in use")

// Server is a running PostgreSQL started by Start. Stop ends it.
type Server struct {
	opts Options
	bins binaries
	user serverUser

	dir     string // caller's Dir (or ours when ownDir): ca.pem, logs
	ownDir  bool
	runtime string   // removed by Stop: data dir, socket dir, server key
	janitor *janitor // removes runtime should we be killed before Stop
	dataDir string
	sockDir string
	caFile  string
	logFile string

	password string
	port     int
	proc     *proc

	took startTimes

	stopOnce sync.Once
	stopErr  error

	dbMu sync.Mutex // guards opts.Databases once the server runs (AddDatabases, DropDatabases)
}

// startTimes say where Start's time went.
type startTimes struct {
	initdb, ready, databases, total time.Duration
}

// Start makes a fresh cluster (initdb), starts postgres on loopback only
// (over TLS with a certificate made for this run unless NoTLS), waits until
// it answers and makes o.Databases. On any failure nothing it started is
// left running and its data dir is gone; the error quotes the server's log.
func Start(ctx context.Context, o Options) (s *Server, err error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	bins, err := findBinaries()
	if err != nil {
		return nil, err
	}
	su, err := currentServerUser()
	if err != nil {
		return nil, err
	}
	if o.Port != 0 {
		// Fail before a second of initdb when the asked port is taken.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.Port)))
		if err != nil {
			return nil, fmt.Errorf("starting PostgreSQL: 127.0.0.1:%d is taken (%w): choose another port, or 0 for a free one", o.Port, err)
		}
		l.Close()
	}
	s = &Server{opts: o, bins: bins, user: su}
	began := time.Now()
	defer func() {
		if err != nil {
			if stopErr := s.Stop(); stopErr != nil {
				err = fmt.Errorf("%w (and cleaning up: %v)", err, stopErr)
			}
			s = nil
		}
	}()
	if err := s.makeDirs(); err != nil {
		return s, err
	}
	if err := s.initdb(ctx); err != nil {
		return s, err
	}
	s.took.initdb = time.Since(began)
	if err := s.configure(); err != nil {
		return s, err
	}
	for attempt := 1; ; attempt++ {
		port := o.Port
		if port == 0 {
			if port, err = freePort(); err != nil {
				return s, err
			}
		}
		err = s.launch(ctx, port)
		if err == nil {
			break
		}
		// A free port is only free until someone binds it: another test's
		// server may take it between our probe and postgres's bind.
		if o.Port == 0 && errors.Is(err, errPortTaken) && attempt < 4 {
			continue
		}
		return s, err
	}
	s.took.ready = time.Since(began) - s.took.initdb
	if err := s.createDatabases(ctx); err != nil {
		return s, err
	}
	s.took.total = time.Since(began)
	s.took.databases = s.took.total - s.took.initdb - s.took.ready
	return s, nil
}

func (s *Server) makeDirs() error {
	if s.opts.Dir == "" {
		d, err := os.MkdirTemp("", "perfgate-store-")
		if err != nil {
			return fmt.Errorf("making the store's folder: %w", err)
		}
		s.dir, s.ownDir = d, true
	} else {
		d, err := filepath.Abs(s.opts.Dir)
		if err != nil {
			return fmt.Errorf("resolving the store's folder %s: %w", s.opts.Dir, err)
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("making the store's folder: %w", err)
		}
		s.dir = d
	}
	s.caFile = filepath.Join(s.dir, "ca.pem")
	s.logFile = filepath.Join(s.dir, "postgres.log")

	// The data dir must be reachable by the server user (a root-only
	// t.TempDir() is not) and the socket path must fit sun_path (108 bytes).
	base := s.dir
	if !s.user.canReach(base) || len(base)+len("/perfgate-pg-1234567890/s/.s.PGSQL.65535") > 100 {
		base = os.TempDir()
	}
	rt, err := os.MkdirTemp(base, "perfgate-pg-")
	if err != nil {
		return fmt.Errorf("making the server's runtime folder: %w", err)
	}
	s.runtime = rt
	if s.ownDir {
		s.janitor = startJanitor(rt, s.dir)
	} else {
		s.janitor = startJanitor(rt)
	}
	s.dataDir = filepath.Join(rt, "data")
	s.sockDir = filepath.Join(rt, "s")
	if err := os.Mkdir(s.sockDir, 0o700); err != nil {
		return fmt.Errorf("making the server's socket folder: %w", err)
	}
	if err := errors.Join(s.user.own(rt), s.user.own(s.sockDir)); err != nil {
		return err
	}
	if s.opts.Owner != "" {
		for _, d := range []string{rt, s.dir} {
			if d == s.dir && !s.ownDir {
				continue // the caller's folder: its logs stay for the report
			}
			if err := os.WriteFile(filepath.Join(d, ownerFile), []byte(s.opts.Owner+"\n"), 0o600); err != nil {
				return fmt.Errorf("writing the store's owner file: %w", err)
			}
		}
	}
	return nil
}

func (s *Server) initdb(ctx context.Context) error {
	pw := make([]byte, 24)
	if _, err := rand.Read(pw); err != nil {
		return fmt.Errorf("making the store's password: %w", err)
	}
	s.password = hex.EncodeToString(pw)
	pwFile := filepath.Join(s.runtime, "pw")
	if err := os.WriteFile(pwFile, []byte(s.password+"\n"), 0o600); err != nil {
		return fmt.Errorf("writing initdb's password file: %w", err)
	}
	defer os.Remove(pwFile)
	if err := s.user.own(pwFile); err != nil {
		return err
	}
	logPath := filepath.Join(s.dir, "initdb.log")
	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("opening initdb's log: %w", err)
	}
	defer log.Close()
	args := []string{
		"-D", s.dataDir, "-U", superuser, "--pwfile=" + pwFile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
		"-E", "UTF8", "--locale=C",
		"--no-sync", // a throwaway cluster: durability of its files buys nothing
		"--no-instructions",
	}
	p, err := startProc(s.user.command(s.bins.initdb, args, s.runtime, log, syscall.SIGKILL))
	if err != nil {
		return fmt.Errorf("starting initdb: %w", err)
	}
	select {
	case <-ctx.Done():
		p.killGroup()
		<-p.done
		return fmt.Errorf("initdb: %w", ctx.Err())
	case <-p.done:
	}
	if p.err != nil {
		return fmt.Errorf("initdb %s: %w: %s", s.dataDir, p.err, tail(logPath, 0, 15))
	}
	return nil
}

// configure writes the run's certificates and an hba that admits only what
// the DSNs use: SCRAM over TLS on 127.0.0.1 (or plain TCP with NoTLS).
func (s *Server) configure() error {
	hba := "# written by perfgate's store: loopback only, SCRAM passwords\n" +
		"local all all scram-sha-256\n"
	if s.tls() {
		certs, err := newRunCerts(time.Now())
		if err != nil {
			return err
		}
		if err := os.WriteFile(s.caFile, certs.caPEM, 0o644); err != nil {
			return fmt.Errorf("writing the run's CA: %w", err)
		}
		for name, b := range map[string][]byte{"server.crt": certs.certPEM, "server.key": certs.keyPEM} {
			p := filepath.Join(s.dataDir, name)
			// postgres refuses a key readable by others than its owner.
			if err := os.WriteFile(p, b, 0o600); err != nil {
				return fmt.Errorf("writing the server's %s: %w", name, err)
			}
			if err := s.user.own(p); err != nil {
				return err
			}
		}
		hba += "hostssl all all 127.0.0.1/32 scram-sha-256\n"
	} else {
		hba += "host all all 127.0.0.1/32 scram-sha-256\n"
	}
	// Rewriting the existing file keeps initdb's ownership of it.
	if err := os.WriteFile(filepath.Join(s.dataDir, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return fmt.Errorf("writing pg_hba.conf: %w", err)
	}
	return nil
}

func (s *Server) tls() bool { return !s.opts.NoTLS }

// launch starts postgres on port and waits until it answers over the DSN's
// own path (TCP, TLS, password), so ready means ready for the arms.
func (s *Server) launch(ctx context.Context, port int) error {
	log, err := os.OpenFile(s.logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("opening the server's log: %w", err)
	}
	defer log.Close() // the child holds its own descriptor
	var offset int64
	if fi, err := log.Stat(); err == nil {
		offset = fi.Size()
	}
	args := []string{
		"-D", s.dataDir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "port=" + strconv.Itoa(port),
		"-c", "unix_socket_directories=" + s.sockDir,
		"-c", "unix_socket_permissions=0700",
		"-c", "logging_collector=off",
		"-c", "log_destination=stderr",
	}
	if s.tls() {
		args = append(args, "-c", "ssl=on", "-c", "ssl_cert_file=server.crt", "-c", "ssl_key_file=server.key",
			"-c", "ssl_min_protocol_version=TLSv1.2")
	}
	for _, k := range sortedKeys(s.opts.Settings) {
		args = append(args, "-c", k+"="+s.opts.Settings[k])
	}
	// SIGQUIT is PostgreSQL's immediate shutdown: if we die, it does too.
	p, err := startProc(s.user.command(s.bins.postgres, args, s.runtime, log, syscall.SIGQUIT))
	if err != nil {
		return fmt.Errorf("starting postgres: %w", err)
	}
	s.proc, s.port = p, port

	cfg, err := pgx.ParseConfig(s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("parsing the server's own DSN: %w", err)
	}
	cfg.ConnectTimeout = 2 * time.Second
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("waiting for postgres to get ready: %w", ctx.Err()), s.halt())
		case <-deadline.C:
			return errors.Join(fmt.Errorf("postgres on port %d not ready after %s: %s", port, readyTimeout, tail(s.logFile, offset, 15)), s.halt())
		case <-p.done:
			log := tail(s.logFile, offset, 15)
			if strings.Contains(log, "could not create any TCP/IP sockets") {
				return fmt.Errorf("postgres could not listen on 127.0.0.1:%d (%w): %s", port, errPortTaken, log)
			}
			return fmt.Errorf("postgres exited while starting (%v): %s", p.err, log)
		case <-tick.C:
		}
		conn, err := pgx.ConnectConfig(ctx, cfg)
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
	}
}

func (s *Server) createDatabases(ctx context.Context) error {
	if len(s.opts.Databases) == 0 {
		return nil
	}
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connecting to make the arms' databases: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, db := range s.opts.Databases {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			return fmt.Errorf("making database %s: %w", db, err)
		}
	}
	return nil
}

// halt ends the server process: fast shutdown, then immediate, then a kill
// of its whole process group. It returns once the process is reaped.
func (s *Server) halt() error {
	p := s.proc
	if p == nil || p.exited() {
		return nil
	}
	_ = syscall.Kill(p.pid, syscall.SIGQUIT)
	if waitDone(p, immediateTimeout) {
		return nil
	}
	kids := children(p.pid)
	p.killGroup()
	for _, k := range kids {
		_ = syscall.Kill(k, syscall.SIGKILL)
	}
	<-p.done
	return fmt.Errorf("postgres (pid %d) ignored an immediate shutdown for %s; killed it and its %d children", p.pid, immediateTimeout, len(kids))
}

func waitDone(p *proc, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Stop shuts the server down (immediate shutdown, waiting for it), then removes
// its data dir, sockets and key; Dir keeps ca.pem and the logs unless Start
// made Dir itself. Calling it again returns the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		errs := []error{s.halt()}
		if s.runtime != "" {
			if err := os.RemoveAll(s.runtime); err != nil {
				errs = append(errs, fmt.Errorf("removing the server's data dir: %w", err))
			}
		}
		s.janitor.end()
		if s.ownDir {
			if err := os.RemoveAll(s.dir); err != nil {
				errs = append(errs, fmt.Errorf("removing the store's folder: %w", err))
			}
		}
		if err := errors.Join(errs...); err != nil {
			s.stopErr = fmt.Errorf("stopping the store: %w", err)
		}
	})
	return s.stopErr
}

// DSN is the connection string of db on this server: the superuser over
// TLS, verified against the run's CA (verify-full, host 127.0.0.1).
func (s *Server) DSN(db string) string {
	q := "sslmode=disable"
	if s.tls() {
		q = "sslmode=verify-full&sslrootcert=" + escapeQuery(s.caFile)
	}
	return "postgres://" + superuser + ":" + s.password + "@" +
		net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) + "/" + db + "?" + q
}

// escapeQuery percent-encodes a query value, leaving a path's slashes
// readable in store.dsn (every URL parser accepts them as they are).
func escapeQuery(v string) string {
	var b strings.Builder
	for _, c := range []byte(v) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9',
			c == '/', c == '.', c == '_', c == '-', c == '~':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// WriteDSN writes db's DSN to dir/store.dsn (mode 0600, no trailing
// newline), the file an arm's config reads through @DIR@, and returns its
// path. db must be one of the databases Start made.
func (s *Server) WriteDSN(db, dir string) (string, error) {
	if dbs := s.Databases(); !slices.Contains(dbs, db) {
		return "", fmt.Errorf("writing the store DSN for %s: the store made no database %q (it has %s)", dir, db, strings.Join(dbs, ", "))
	}
	path := filepath.Join(dir, "store.dsn")
	// Write a private temporary file and rename it, so the password is
	// never readable by others, not even for an instant.
	f, err := os.CreateTemp(dir, ".store.dsn-")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	_, werr := f.WriteString(s.DSN(db))
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// Commits is db's committed transactions so far (pg_stat_database), read
// from the maintenance database; see Commits and docs/armdb.md for the lag.
func (s *Server) Commits(ctx context.Context, db string) (int64, error) {
	return Commits(ctx, s.DSN("postgres"), db)
}

// StartTime is how long Start took, initdb to the last database made.
func (s *Server) StartTime() time.Duration { return s.took.total }

// Port is the server's TCP port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// PID is the postmaster's process id (its children share its process group).
func (s *Server) PID() int {
	if s.proc == nil {
		return 0
	}
	return s.proc.pid
}

// CAFile is the run's CA certificate, the DSNs' sslrootcert.
func (s *Server) CAFile() string { return s.caFile }

// LogFile is the server's log, kept for the report.
func (s *Server) LogFile() string { return s.logFile }

// Databases are the databases Start made.
func (s *Server) Databases() []string {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	return slices.Clone(s.opts.Databases)
}

// AddDatabases makes more databases on the running server, as Start makes
// Options.Databases, and refuses the names Start refuses. A name the server
// already has is refused, not reused: its commits and rows belong to
// whoever made it. The test suite uses it to give each test its own
// databases on one server per test binary; the gate makes all of its
// databases at Start.
func (s *Server) AddDatabases(ctx context.Context, dbs ...string) error {
	if err := checkDatabases(dbs); err != nil {
		return fmt.Errorf("making databases on the store: %w", err)
	}
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	for _, db := range dbs {
		if slices.Contains(s.opts.Databases, db) {
			return fmt.Errorf("making database %s: the store already has it", db)
		}
	}
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connecting to make databases %s: %w", strings.Join(dbs, ", "), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, db := range dbs {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{db}.Sanitize()); err != nil {
			return fmt.Errorf("making database %s: %w", db, err)
		}
		s.opts.Databases = append(s.opts.Databases, db)
	}
	return nil
}

// DropDatabases removes databases AddDatabases (or Start) made, ending
// any session still connected to them.
func (s *Server) DropDatabases(ctx context.Context, dbs ...string) error {
	s.dbMu.Lock()
	defer s.dbMu.Unlock()
	conn, err := pgx.Connect(ctx, s.DSN("postgres"))
	if err != nil {
		return fmt.Errorf("connecting to drop databases %s: %w", strings.Join(dbs, ", "), err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for _, db := range dbs {
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db}.Sanitize()+" WITH (FORCE)"); err != nil {
			return fmt.Errorf("dropping database %s: %w", db, err)
		}
		s.opts.Databases = slices.DeleteFunc(s.opts.Databases, func(d string) bool { return d == db })
	}
	return nil
}

// String names the server without its password, for logs.
func (s *Server) String() string {
	return fmt.Sprintf("PostgreSQL on 127.0.0.1:%d (pid %d, databases %s)", s.port, s.PID(), strings.Join(s.Databases(), ", "))
}

// freePort is a port for the store, picked as the arms' are
// (host.FreePorts): a port bind(0) hands out lies in the ephemeral range,
// where an outgoing connection may take it before PostgreSQL binds it.
func freePort() (int, error) {
	ports, err := host.FreePorts(1)
	if err != nil {
		return 0, fmt.Errorf("finding a free loopback port for the store: %w", err)
	}
	return ports[0], nil
}
