package base

import (
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/event"
)

// commit resolves a revision (hash, ref, tag, origin/main) to a commit,
// peeling annotated tags. what names the revision's role for the message.
func (rs *resolver) commit(rev, what string) (*object.Commit, error) {
	if err := rs.ctx.Err(); err != nil {
		return nil, err
	}
	c, ok, err := rs.objects.commit(rev)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, missingf("%s %q is not in this clone: fetch it (git fetch origin %s)", what, rev, rev)
	}
	return c, nil
}

// branch resolves a branch name the way a CI checkout holds it: GitHub
// names "main", actions/checkout keeps it as refs/remotes/origin/main, a
// laptop may pass origin/main or a local branch.
func (rs *resolver) branch(name, what string) (*object.Commit, string, error) {
	var tries []string
	switch {
	case strings.HasPrefix(name, "refs/heads/"):
		b := strings.TrimPrefix(name, "refs/heads/")
		tries = []string{"refs/remotes/origin/" + b, name}
	case strings.HasPrefix(name, "refs/"):
		tries = []string{name}
	default:
		tries = []string{"refs/remotes/origin/" + name, "refs/heads/" + name, name}
	}
	for _, t := range tries {
		if err := rs.ctx.Err(); err != nil {
			return nil, "", err
		}
		c, ok, err := rs.objects.commit(t)
		if err != nil {
			return nil, "", err
		}
		if ok {
			return c, strings.TrimPrefix(strings.TrimPrefix(t, "refs/remotes/"), "refs/heads/"), nil
		}
	}
	return nil, "", missingf("%s %q is not in this clone: fetch it (git fetch origin %s)", what, name, strings.TrimPrefix(name, "refs/heads/"))
}

// firstParent is c's first parent, nil for a root commit.
func (rs *resolver) firstParent(c *object.Commit) (*object.Commit, error) {
	if c.NumParents() == 0 {
		return nil, nil
	}
	p, err := c.Parent(0)
	if err != nil {
		return nil, missingf("reading the parent of %s: %w", event.ShortSHA(c.Hash.String()), err)
	}
	return p, nil
}
