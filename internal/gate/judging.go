package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

// judgingPlan is the plan a prepared gate judges with. A pull request
// cannot loosen its own gate: what is sent is the head's plan, but the
// judging settings are the stricter of the head's and the base's
// (plan.JudgingSettings), the base's plan read from the base arm's kept
// contract. reshape, the command line's profile, is the operator's and
// reshapes both plans alike before they are compared. A base without a
// plan, or with one this perfgate refuses, leaves the head's settings to
// judge, and the returned Judging says so.
func judgingPlan(head *plan.Plan, baseC *contract.Contract, baseCommit string, reshape func(*plan.AB) error) (*plan.Plan, *report.Judging, error) {
	if reshape != nil {
		if err := reshape(&head.AB); err != nil {
			return nil, nil, err
		}
	}
	rel := baseC.Plan
	if rel == "" {
		rel = contract.DefaultPlan
	}
	path := filepath.Join(baseC.Tree, filepath.FromSlash(rel))
	j := &report.Judging{}
	var base *plan.Plan
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		j.Note = fmt.Sprintf("The base (%s) has no plan at %s: the head's settings judge this run.", event.ShortSHA(baseCommit), rel)
	} else if base, err = plan.ParseFile(path); err != nil {
		// Written for an older perfgate, perhaps: the head's plan, which
		// this perfgate reads, is the only one left to judge with.
		base = nil
		j.Note = fmt.Sprintf("The base's plan %s (%s) is refused by this perfgate (%v): the head's settings judge this run.", rel, event.ShortSHA(baseCommit), err)
	} else {
		j.BasePlan = filepath.ToSlash(rel)
		if reshape != nil {
			if err := reshape(&base.AB); err != nil {
				return nil, nil, err
			}
		}
	}
	judged, changes := plan.JudgingSettings(base, head)
	j.Changed = changes
	return &judged, j, nil
}

// judgingControls are the controls a prepared gate judges with: the
// base's gate file's kinds, resolved in the base's tree against the judged
// plan, over the head's (plan.JudgingControls). A base control that cannot
// be resolved against the head's plan (the head no longer sends what it
// counts) is left out and listed, as a threshold on a group the head
// dropped is.
func judgingControls(judged *plan.Plan, baseC, headC *contract.Contract, j *report.Judging) (plan.Controls, error) {
	headCtls, err := headC.ResolveControls(judged)
	if err != nil {
		return nil, err
	}
	var baseCtls plan.Controls
	for _, c := range baseC.Controls {
		one := plan.Controls{c}
		if err := one.Resolve(baseC.Tree, judged); err != nil {
			ch := plan.Change{Setting: "[[control]] " + c.Kind, Base: fmt.Sprintf("refused against the head's plan (%v)", err), Head: "absent", Judged: "absent"}
			if h, ok := headCtls.Of(c.Kind); ok {
				ch.Head, ch.Judged = "declared", "the head's"
				baseCtls = append(baseCtls, h) // the head's own, rather than none
			}
			j.Changed = append(j.Changed, ch)
			continue
		}
		baseCtls = append(baseCtls, one...)
	}
	ctls, changes := plan.JudgingControls(baseCtls, headCtls)
	j.Changed = append(j.Changed, changes...)
	return ctls, nil
}
