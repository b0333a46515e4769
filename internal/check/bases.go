package check

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
)

// bases resolves the base for each event type on HEAD with prepare's own
// resolveBase (so a legacy tree counts as the head's [legacy] says), and
// returns the distinct commits they name.
func (c *checker) bases(ctx context.Context, repo, baseRef, tag string, head *contract.Contract) []string {
	if baseRef == "" {
		for _, ref := range []string{"main", "master", "origin/main", "origin/master"} {
			if _, err := gitOut(ctx, repo, "rev-parse", "--verify", "--quiet", ref+"^{commit}"); err == nil {
				baseRef = ref
				break
			}
		}
	}
	headSHA, err := gitOut(ctx, repo, "rev-parse", "HEAD")
	if err != nil {
		c.fail("base", exit.Refusef("%s: not a git repository with a HEAD (%v); run perfgate check in a checkout or give --repo", repo, err))
		return nil
	}
	before, _ := gitOut(ctx, repo, "rev-parse", "--verify", "--quiet", "HEAD~1")
	if tag == "" {
		tag, _ = gitOut(ctx, repo, "describe", "--tags", "--exact-match", "HEAD")
	}
	seen := map[string]bool{}
	var commits []string
	type ev struct {
		name string
		opts event.LocalOptions
	}
	list := []ev{
		{name: event.PullRequest, opts: event.LocalOptions{Head: headSHA, BaseRef: baseRef}},
		{name: event.MergeGroup, opts: event.LocalOptions{Head: headSHA, BaseRef: baseRef}},
		{name: event.Push, opts: event.LocalOptions{Head: headSHA, Before: before}},
		{name: event.WorkflowDispatch, opts: event.LocalOptions{Head: headSHA}},
		{name: event.Release, opts: event.LocalOptions{Head: headSHA, Tag: tag}},
	}
	for _, e := range list {
		name := "base for " + e.name
		switch {
		case (e.name == event.PullRequest || e.name == event.MergeGroup) && baseRef == "":
			c.skip(name, "no main or master branch; give --base-ref")
			continue
		case e.name == event.MergeGroup:
			// A merge group's base is its target branch's tip.
			sha, err := gitOut(ctx, repo, "rev-parse", baseRef+"^{commit}")
			if err != nil {
				c.fail(name, err)
				continue
			}
			e.opts = event.LocalOptions{Head: headSHA, BaseRef: baseRef, BaseSHA: sha}
		case e.name == event.Push && before == "":
			c.skip(name, "HEAD has no parent")
			continue
		case e.name == event.Release && tag == "":
			c.skip(name, "HEAD carries no tag; give --tag")
			continue
		}
		evt, err := event.Local(e.name, e.opts)
		if err != nil {
			c.fail(name, err)
			continue
		}
		choice, err := gate.ResolveBase(ctx, repo, evt, head)
		if errors.Is(err, base.ErrNoPreviousRelease) {
			// A release before HEAD is what the manual and release lanes
			// compare with; a repository without one cannot exercise
			// them yet. Which tags count is the resolver's to say.
			c.skip(name, "%v", err)
			continue
		}
		if err != nil {
			c.fail(name, err)
			continue
		}
		c.ok(name, "%s", choice.Reason)
		if !seen[choice.Commit] && choice.Commit != headSHA {
			seen[choice.Commit] = true
			commits = append(commits, choice.Commit)
		}
	}
	return commits
}

func gitOut(ctx context.Context, repo string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return "", errors.New("git " + strings.Join(args, " ") + ": " + msg)
	}
	return strings.TrimSpace(out.String()), nil
}
