// Command perfgate-verdictd is the verdict service: it records every
// attempt, answers retry or final, and publishes verdicts to GitHub. All of
// it lives in internal/verdict; see docs/verdictd.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict/daemon"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	err := daemon.Main(ctx, os.Args[1:], daemon.IO{Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv})
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, exit.Line("perfgate-verdictd", err))
	}
	os.Exit(exit.Code(err))
}
