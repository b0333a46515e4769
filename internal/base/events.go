package base

import (
	"errors"
	"fmt"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// pullRequest: the merge base of the checked-out commit and the base
// branch. On GitHub the checked-out commit is the merge of the PR into the
// base tip, so the merge base is that tip; on a laptop it is the PR's head,
// so the merge base is the fork point, however far the base branch moved on.
func (rs *resolver) pullRequest() (*Choice, error) {
	head, err := rs.head()
	if err != nil {
		return nil, err
	}
	var tip *object.Commit
	label := rs.ev.BaseRef
	if rs.ev.BaseRef != "" {
		tip, label, err = rs.branch(rs.ev.BaseRef, "the pull request's base branch")
	}
	if tip == nil && rs.ev.BaseSHA != "" {
		// The payload's base tip stands in when the branch was not fetched.
		tip, err = rs.commit(rs.ev.BaseSHA, "the pull request's base commit")
		label = "`" + event.ShortSHA(rs.ev.BaseSHA) + "`"
		if rs.ev.BaseRef != "" {
			label += " (" + rs.ev.BaseRef + "'s tip when the event fired)"
		}
	}
	if err != nil {
		return nil, err
	}
	if tip == nil {
		return nil, exit.Refusef("the pull_request event names no base branch: pass --base-ref")
	}
	mb, err := rs.git.mergeBase(rs.ctx, head.Hash.String(), tip.Hash.String())
	if err != nil {
		return nil, err
	}
	if mb == "" {
		return nil, missingf("the checked-out commit %s and the base branch %s share no history, so there is no merge base to judge against", event.ShortSHA(head.Hash.String()), label)
	}
	c := &Choice{Commit: mb, Reason: fmt.Sprintf("The base is `%s`, the merge base of the checked-out commit `%s` and %s, the pull request's base branch.",
		mb, event.ShortSHA(head.Hash.String()), label)}
	return rs.requireContract(c, "the pull request's merge base")
}

// mergeGroup: the queue's base_sha, the base-branch commit the group's
// changes are stacked on.
func (rs *resolver) mergeGroup() (*Choice, error) {
	b, err := rs.commit(rs.ev.BaseSHA, "the merge group's base_sha")
	if err != nil {
		return nil, err
	}
	on := "the base branch"
	if rs.ev.BaseRef != "" {
		on = strings.TrimPrefix(rs.ev.BaseRef, "refs/heads/")
	}
	c := &Choice{Commit: b.Hash.String(), Reason: fmt.Sprintf("The base is `%s`, the merge group's base on %s.", b.Hash, on)}
	return rs.requireContract(c, "the merge group's base")
}

// push: the tip before the push. A new branch (zero before), a force push
// and a first commit are defined in docs/base.md.
func (rs *resolver) push() (*Choice, error) {
	head, err := rs.head()
	if err != nil {
		return nil, err
	}
	hs := head.Hash.String()
	before := rs.ev.Before
	if event.IsZero(before) {
		return rs.newBranch(head, "the push created the branch (its before is all zeros)")
	}
	prev, err := rs.commit(before, "the commit before the push")
	if err != nil {
		var m *errMissing
		if rs.shallow || !errors.As(err, &m) {
			return nil, err
		}
		if !hexCommit.MatchString(before) {
			// A payload's before is always a full hash; a name or an
			// expression (a local --before) that reads as nothing is a
			// mistake, not a tip a force push dropped.
			return nil, exit.Refusef("the commit before the push, %q, names no commit in this clone: give --before a commit of this repository (a full hash, HEAD~3, origin/main); only a full hash missing from the clone is read as a tip a force push dropped", before)
		}
		// Only a force push loses the old tip: the clone fetched the
		// rewritten branch, and nothing else kept the old commit.
		return rs.newBranch(head, fmt.Sprintf("the commit before the push, `%s`, is not in the clone (the force push dropped it)", event.ShortSHA(before)))
	}
	ps := prev.Hash.String()
	if ps == hs {
		return rs.newBranch(head, fmt.Sprintf("the push left the branch at `%s`", event.ShortSHA(hs)))
	}
	anc, err := rs.git.isAncestor(rs.ctx, ps, hs)
	if err != nil {
		return nil, err
	}
	if anc {
		c := &Choice{Commit: ps, Reason: fmt.Sprintf("The base is `%s`, the commit before the push.", ps)}
		return rs.requireContract(c, "the commit before the push")
	}
	// A force push: judge the new commits against what they were built on,
	// the last commit the old and the new history share.
	mb, err := rs.git.mergeBase(rs.ctx, ps, hs)
	if err != nil {
		return nil, err
	}
	if mb == "" {
		return rs.newBranch(head, fmt.Sprintf("the force push replaced `%s` with a history that shares nothing with it", event.ShortSHA(ps)))
	}
	c := &Choice{Commit: mb, Reason: fmt.Sprintf("The base is `%s`, the last commit the force-pushed history shares with the tip it replaced, `%s`.", mb, event.ShortSHA(ps))}
	return rs.requireContract(c, "the force push's shared commit")
}

// newBranch judges a push that has no usable tip before it: against the
// point where the branch left the default branch, else against the pushed
// commit's first parent. A root commit has nothing to be judged against.
func (rs *resolver) newBranch(head *object.Commit, since string) (*Choice, error) {
	hs := head.Hash.String()
	def := strings.TrimPrefix(rs.ev.BaseRef, "refs/heads/")
	pushed := strings.TrimPrefix(rs.ev.Ref, "refs/heads/")
	if def != "" && def != pushed {
		tip, label, err := rs.branch(def, "the default branch")
		if err != nil && rs.shallow {
			return nil, err
		}
		if err == nil {
			mb, err := rs.git.mergeBase(rs.ctx, hs, tip.Hash.String())
			if err != nil {
				return nil, err
			}
			if mb != "" && mb != hs {
				c := &Choice{Commit: mb, Reason: fmt.Sprintf("The base is `%s`, where the pushed branch left %s, since %s.", mb, label, since)}
				return rs.requireContract(c, "where the branch left "+label)
			}
		}
	}
	parent, err := rs.firstParent(head)
	if err != nil {
		return nil, err
	}
	if parent == nil {
		if rs.shallow {
			return nil, missingf("the pushed commit has no parent in this clone")
		}
		return nil, exit.Refusef("`%s` is the repository's first commit and %s: there is no earlier commit to judge it against, so the gate names no base", event.ShortSHA(hs), since)
	}
	ps := parent.Hash.String()
	c := &Choice{Commit: ps, Reason: fmt.Sprintf("The base is `%s`, the parent of the pushed commit `%s`, since %s.", ps, event.ShortSHA(hs), since)}
	return rs.requireContract(c, "the pushed commit's parent")
}
