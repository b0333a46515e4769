package gate

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/perfgate/perfgate/internal/services"
)

// ServicesUpOptions are perfgate services up's inputs.
type ServicesUpOptions struct {
	Head, Base services.Tree
	RunID      string // "" for a fresh one (NewRunID)
	LogDir     string
	Wait       time.Duration // for every service to be healthy
	// Out receives the plan and the outcome; Err what to run to remove
	// the services and what a killed run left that was swept.
	Out, Err io.Writer
}

// ServicesUp starts the head's services and the base's copies and leaves
// them running, labelled with the run id.
func ServicesUp(ctx context.Context, o ServicesUpOptions) error {
	if o.RunID == "" {
		o.RunID = NewRunID()
	}
	start := time.Now()
	p, err := services.Diff(ctx, o.Head, o.Base)
	if err != nil {
		return err
	}
	p.WaitTimeout = o.Wait
	// Said first, before anything starts: it is what a user whose command
	// is killed needs to remove the services, and a long plan table must
	// not push it out of sight. A plan that fails starts nothing, so no id
	// is printed for it.
	fmt.Fprintf(o.Err, "run %s: remove its services with: perfgate services down --run-id %s\n", o.RunID, o.RunID)
	p.WriteTable(o.Out)
	// What a killed `perfgate run` of this checkout left holds its ports.
	// Services this command started are not swept: they carry no owner,
	// they are meant to outlive it.
	checkout := Checkout(o.Head.Dir)
	stale, err := services.DownStale(ctx, checkout, OwnerGone)
	for _, st := range stale {
		fmt.Fprintf(o.Err, "services: removed run %s of this checkout, whose process is gone\n", st.RunID)
	}
	if err != nil {
		return err
	}
	r, err := services.Up(ctx, p, services.Start{RunID: o.RunID, LogDir: o.LogDir, Checkout: checkout})
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Out, "\nrun %s: %d compose project(s) healthy %s after `services up` started (files and logs in %s)\n",
		o.RunID, len(r.Projects), time.Since(start).Round(time.Millisecond), r.LogDir())
	fmt.Fprintf(o.Out, "stop them with: perfgate services down --run-id %s\n", o.RunID)
	return nil
}
