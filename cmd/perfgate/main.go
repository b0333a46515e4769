// Command perfgate is the performance gate's CLI and the action's entrypoint.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfgate/perfgate/internal/cli"
	"github.com/perfgate/perfgate/internal/exit"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := cli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(exit.Code(err))
}
