package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment/target"
)

// capacity-target runs the bundled capacity target (W workers, service
// time S, a queue limit past which it answers 503, a pool-wait gauge on
// /metrics), so an experiment can be tried against a service whose knee is
// known to be W/S.

func runCapacityTarget(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("capacity-target", s)
	listen := fs.String("listen", "127.0.0.1:8080", "`address` to listen on (port 0 picks a free one)")
	workers := fs.Int("workers", 4, "`W`, requests served at once")
	service := fs.Duration("service", 20*time.Millisecond, "`S`, how long a worker takes per request")
	queue := fs.Int("queue", 1000, "requests that may wait for a worker before the target answers 503")
	failAbove := fs.Int("fail-above", 0, "answer 503 to a request arriving while more than `N` are inside (0: never)")
	hitEvery := fs.Int("hit-every", 0, "answer JSON {\"cache\":{\"hit\":...}} with X-Cache, a hit for every `N`-th request (0: plain \"ok\")")
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return exit.Refusef("perfgate capacity-target: unexpected argument %q; every setting is a flag", fs.Arg(0))
	}
	srv, err := target.New(target.Config{Workers: *workers, Service: *service, Queue: *queue, FailAbove: *failAbove, HitEvery: *hitEvery})
	if err != nil {
		return exit.Refuse(err)
	}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return exit.Refuse(fmt.Errorf("capacity target: listening on %s: %w", *listen, err))
	}
	fmt.Fprintf(s.Out, "capacity target on http://%s: %d workers x %s = %.1f requests/s\n", l.Addr(), *workers, *service, float64(*workers)/service.Seconds())
	return srv.Serve(ctx, l)
}
