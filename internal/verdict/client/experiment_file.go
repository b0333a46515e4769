package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/experiment"
	"github.com/perfgate/perfgate/internal/verdict"
)

// FileExperiment is perfgate experiment --post: it files rep with the
// service at url under p's repository, target, branch and commit, with
// the job's credentials (a repository token or the job's OIDC token for
// audience; mask hides it in the log), says so on log, and compares the
// knee with the default branch's last one there, as --previous compares
// it with a file.
func FileExperiment(ctx context.Context, getenv func(string) string, mask func(string), log io.Writer, url, audience string, rep *experiment.Report, p verdict.ExperimentPost) error {
	var b strings.Builder
	if err := rep.Write(&b); err != nil {
		return fmt.Errorf("encoding the experiment report: %w", err)
	}
	p.Report = json.RawMessage(b.String())
	tok, err := JobToken(getenv, audience, mask)
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate experiment --post: %w", err))
	}
	c, err := New(url, tok, nil)
	if err != nil {
		return exit.Refuse(err)
	}
	rc, err := c.PostExperiment(ctx, p)
	if err != nil {
		return exit.Refuse(fmt.Errorf("perfgate experiment --post %s: %w", url, err))
	}
	fmt.Fprintf(log, "perfgate experiment: filed as experiment %d of %s at %s\n", rc.ID, p.Repository, url)
	if last := rc.Previous; last != nil {
		before := &experiment.Report{Routine: experiment.Routine{Knee: last.Knee, KneeLevel: last.KneeLevel, FirstResource: last.FirstResource,
			FirstResourceAt: last.FirstResourceLevel, PlateauGrowth: last.PlateauGrowth, RecoveryS: last.RecoveryS}}
		experiment.Compare(rep, before, fmt.Sprintf("the default branch's last on the service, commit %s", event.ShortSHA(last.CommitSHA)))
	}
	return nil
}
