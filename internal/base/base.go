// Package base picks the commit a change is judged against and says why in
// one sentence. The rules are DESIGN.md's: pull request -> merge base with
// its base branch; merge group -> its base_sha; push -> the tip before the
// push; manual dispatch and release -> the previous release tag, or the
// oldest later commit that carries the gate contract when that tag carries
// none. docs/base.md holds the full rules, edge cases included.
//
// go-git opens the repository, reports a shallow clone and gives the
// contract check its *object.Commit. The history-wide questions (merge
// base, which tags are reachable, which commits descend from a tag) run the
// git CLI: go-git answers them by decoding every commit of the history,
// which on a 50k-commit repository takes 7-21 s where git takes
// milliseconds (bench/base prints both). Objects are read through one
// `git cat-file --batch` (see catFile), since go-git's pack storage spends
// ~100 ms indexing a large pack before its first lookup.
package base

import (
	"context"
	"errors"
	"fmt"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// ContractCheck reports whether a commit's tree carries the gate contract.
// When ok is false, why says what the commit lacks, phrased to follow the
// commit or tag's name, for example "carries neither perf/arm.env nor a
// scripts/perf/gate.sh whose gateway_env() sets a gateway's overrides"; the
// release-notes line quotes it after "since v0.0.16".
type ContractCheck func(c *object.Commit) (ok bool, why string, err error)

// Choice is the base and why.
type Choice struct {
	// Commit is the base commit's full hash.
	Commit string
	// Reason is one sentence: "The base is `<commit>`, <why>."
	Reason string
	// Note is the release-notes line: "Performance: " + Reason.
	Note string
	// Event is the event name the choice was made for.
	Event string
	// PreviousTag is the previous release tag (workflow_dispatch, release).
	PreviousTag string
}

// Resolve picks the base for ev in the repository at (or above) repoDir.
// has may be nil, in which case every commit counts as carrying the
// contract. Every refusal is an exit 2 error with one message; a shallow
// clone that lacks what the event needs gets the fetch-depth advice alone.
func Resolve(ctx context.Context, repoDir string, ev *event.Event, has ContractCheck) (*Choice, error) {
	if ev == nil {
		return nil, exit.Refusef("resolving the base: no event given")
	}
	r, err := git.PlainOpenWithOptions(repoDir, &git.PlainOpenOptions{DetectDotGit: true})
	if err != nil {
		return nil, exit.Refusef("opening the git repository at %s: %w: run the gate inside the repository's checkout", repoDir, err)
	}
	shallow, err := r.Storer.Shallow()
	if err != nil {
		return nil, exit.Refusef("reading %s's shallow list: %w", repoDir, err)
	}
	cli, err := newGitCLI(r, repoDir)
	if err != nil {
		return nil, err
	}
	objects, err := cli.startCatFile(ctx)
	if err != nil {
		return nil, err
	}
	defer objects.Close()
	rs := &resolver{ctx: ctx, git: cli, objects: objects, shallow: len(shallow) > 0, has: has, ev: ev}
	c, err := rs.resolve()
	if err != nil {
		return nil, rs.explain(err)
	}
	c.Event = ev.Name
	c.Note = "Performance: " + c.Reason
	return c, nil
}

type resolver struct {
	ctx     context.Context
	git     *gitCLI
	objects *catFile
	shallow bool
	has     ContractCheck
	ev      *event.Event
}

// errMissing marks a failure caused by history or refs absent from the
// clone; in a shallow clone that is the clone's depth, whatever the detail.
type errMissing struct{ err error }

func (e *errMissing) Error() string { return e.err.Error() }
func (e *errMissing) Unwrap() error { return e.err }

func missingf(format string, a ...any) error {
	return &errMissing{err: fmt.Errorf(format, a...)}
}

func (rs *resolver) explain(err error) error {
	var m *errMissing
	if rs.shallow && errors.As(err, &m) {
		return exit.Refusef("this clone is shallow and lacks the history the %s base is found in: set `fetch-depth: 0` on actions/checkout (or run `git fetch --unshallow --tags`)", rs.ev.Name)
	}
	if errors.As(err, &m) {
		return exit.Refuse(err)
	}
	return err
}

func (rs *resolver) resolve() (*Choice, error) {
	switch rs.ev.Name {
	case event.PullRequest:
		return rs.pullRequest()
	case event.MergeGroup:
		return rs.mergeGroup()
	case event.Push:
		return rs.push()
	case event.WorkflowDispatch:
		head, err := rs.head()
		if err != nil {
			return nil, err
		}
		return rs.fromPreviousTag(head, "", "the checked-out commit")
	case event.Release:
		return rs.release()
	}
	return nil, exit.Refusef("event %q is not one the gate judges: use one of %s", rs.ev.Name, strings.Join(event.Names, ", "))
}

// head is the commit being judged: the event's SHA, else HEAD.
func (rs *resolver) head() (*object.Commit, error) {
	rev := rs.ev.SHA
	if rev == "" {
		rev = "HEAD"
	}
	return rs.commit(rev, "the checked-out commit")
}

// requireContract refuses a base that cannot be booted as an arm.
func (rs *resolver) requireContract(c *Choice, what string) (*Choice, error) {
	if rs.has == nil {
		return c, nil
	}
	commit, err := rs.commit(c.Commit, what)
	if err != nil {
		return nil, err
	}
	ok, why, err := rs.has(commit)
	if err != nil {
		return nil, fmt.Errorf("reading the gate contract of the base %s: %w", event.ShortSHA(c.Commit), err)
	}
	if !ok {
		return nil, exit.Refusef("the base %s (%s) %s, so it cannot run as the base arm: the gate judges changes once the gate contract is on their base (see docs/contract.md)", event.ShortSHA(c.Commit), what, clause(why))
	}
	return c, nil
}

// clause makes the contract check's why follow a commit's name: a why that
// already reads as a predicate ("carries neither ...") is kept, anything
// else is quoted after "carries no gate contract".
func clause(why string) string {
	why = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(why), "."))
	if why == "" {
		return "carries no gate contract"
	}
	for _, verb := range []string{"carries ", "has ", "lacks ", "holds ", "is ", "does "} {
		if strings.HasPrefix(why, verb) {
			return why
		}
	}
	return "carries no gate contract (" + why + ")"
}
