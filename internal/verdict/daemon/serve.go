package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/publish"
)

func serve(ctx context.Context, args []string, s IO) error {
	fs := flag.NewFlagSet("perfgate-verdictd serve", flag.ContinueOnError)
	fs.SetOutput(s.Err)
	var c config
	serveFlags(fs, &c, s)
	if err := parse(fs, args, s); err != nil {
		return err
	}
	if err := c.check(); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return exit.Refusef("--log-level %q: write debug, info, warn or error", c.logLevel)
	}
	log := slog.New(slog.NewJSONHandler(s.Err, &slog.HandlerOptions{Level: level}))

	pub, err := publisher(ctx, &c, log)
	if err != nil {
		return err
	}
	st, err := db.Open(ctx, c.store)
	if err != nil {
		return exit.Refuse(err)
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	metrics := httpapi.NewMetrics()
	maxRetries := c.maxRetries
	if maxRetries == 0 {
		maxRetries = -1 // attempts.Policy reads 0 as its default, negative as none
	}
	cfg := verdict.Config{
		StallProne: attempts.ParseStallProne(c.stallProne), MaxRetries: maxRetries, Learn: c.learn,
		OnAttempt: metrics.Attempt, Log: log,
	}
	if pub != nil {
		cfg.Publisher = pub
	}
	svc := verdict.New(st, cfg)
	if pub != nil {
		go republish(ctx, svc, log)
	}
	auth := &httpapi.Auth{TokenRepository: st.TokenRepository, ReadsPublic: c.reads == "public"}
	if pub != nil {
		// With GitHub credentials every attempt is held against GitHub's
		// record of its run before it is filed and published.
		auth.Runs = pub
	}
	if c.audience != "" {
		auth.OIDC = &httpapi.OIDC{Issuer: c.issuer, Audience: c.audience, Allow: c.allow,
			Workflows: c.workflows, Relays: c.relays, UseTokenID: st.UseTokenID}
	}
	handler := httpapi.New(svc, httpapi.Options{MaxBody: c.maxBody, Auth: auth, Metrics: metrics, Log: log, Experiments: st})

	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		return exit.Refusef("--listen %s: %v: pick a free address", c.listen, err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: 2 * time.Minute}
	log.Info("serving", "addr", ln.Addr().String(), "store", st.String(), "migrations_applied", applied,
		"oidc", auth.OIDC != nil, "reads", c.reads, "publishing", pub != nil)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serving on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	// SIGTERM: stop accepting, let in-flight requests finish (each answers
	// only after its attempt is committed), then close the store.
	log.Info("shutting down", "grace", c.shutdown.String())
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.shutdown)
	defer cancel()
	err = srv.Shutdown(sctx)
	if serr := <-done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	log.Info("stopped")
	return nil
}

// probeTimeout bounds the start's question to GitHub.
const probeTimeout = 30 * time.Second

// How the service waits for what it could not publish: a release line
// whose release is not made yet (a release published by hand after the
// gate), or GitHub down. Each minute it retries the targets that failed
// of the verdicts of the last day; a verdict older than that is left to
// a repeat of its attempt (re-running the verdict job).
const (
	republishEvery  = time.Minute
	republishWithin = 24 * time.Hour
)

// republish retries, every republishEvery until ctx ends, the verdicts of
// the last republishWithin that did not all reach GitHub.
func republish(ctx context.Context, svc verdict.Service, log *slog.Logger) {
	tick := time.NewTicker(republishEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			n, err := svc.Republish(ctx, now.Add(-republishWithin))
			if err != nil && ctx.Err() == nil {
				log.Warn("publishing again what did not reach GitHub", "err", err)
			}
			if n > 0 {
				log.Info("published again what had not reached GitHub", "runs", n)
			}
		}
	}
}

// publisher builds the GitHub publisher from the settings; none given
// means publishing is off (the service still records and decides). It asks
// GitHub whether the credentials can create check runs and refuses to
// start (exit 2) when GitHub says they cannot: a service that would get
// 403 on every check is better stopped at once than found out at the
// first verdict. GitHub not answering is only logged.
func publisher(ctx context.Context, c *config, log *slog.Logger) (*publish.Client, error) {
	p, err := publish.FromEnv(c.github)
	if errors.Is(err, publish.ErrNoCredentials) {
		return nil, nil
	}
	if err != nil {
		return nil, exit.Refuse(fmt.Errorf("publishing to GitHub: %w", err))
	}
	pctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	what, err := p.Probe(pctx)
	if errors.Is(err, publish.ErrCannotPublish) {
		return nil, exit.Refuse(fmt.Errorf("publishing to GitHub: %w", err))
	}
	if err != nil {
		log.Warn("could not ask GitHub whether the credentials create check runs; serving anyway", "err", err)
		return p, nil
	}
	log.Info("publishing to GitHub", "as", what)
	return p, nil
}
