package exampleservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Main runs the service until ctx ends (the thin main cancels it on SIGTERM
// and SIGINT), then shuts down gracefully. args are the knobs, without the
// program name. It returns flag.ErrHelp (wrapped) for -h.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var st *pgStore
	dsn, err := c.dsn()
	if err != nil {
		return err
	}
	if dsn != "" {
		if st, err = openStore(ctx, dsn); err != nil {
			return err
		}
		defer st.close()
	}

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("exampled: listening on --addr %s: %w", c.addr, err)
	}
	s := newServer(c, st)
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}

	// The background workers run for the service's whole life, idle or
	// not, as a real service's sweepers and pollers do.
	var bg sync.WaitGroup
	bgErr := make(chan error, 1)
	s.startBackground(ctx, &bg, bgErr)

	fmt.Fprintf(stdout, "exampled: listening on http://%s (%s)\n", ln.Addr(), c.summary(st != nil))
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-serveErr:
		runErr = fmt.Errorf("exampled: serving: %w", runErr)
	case runErr = <-bgErr:
	}
	cancel()
	shutdownCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	if err := srv.Shutdown(shutdownCtx); err != nil && runErr == nil {
		runErr = fmt.Errorf("exampled: shutting down: %w", err)
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) && runErr == nil {
		runErr = fmt.Errorf("exampled: serving: %w", err)
	}
	bg.Wait()
	if runErr == nil {
		fmt.Fprintln(stdout, "exampled: stopped")
	}
	return runErr
}

func (c *config) summary(withStore bool) string {
	s := fmt.Sprintf("latency=%s factor=%g cpu-work=%d alloc=%d leak=%d store=%t store-writes=%d idle-busy=%g idle-commits=%g stall=%s",
		c.latency, c.latencyFactor, c.cpuWork, c.alloc, c.leak, withStore, c.storeWrites, c.idleBusy, c.idleCommits, c.stall)
	if len(c.overrides) > 0 {
		s += " status-override=" + c.overrides.String()
	}
	return s
}
