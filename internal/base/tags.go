package base

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing/object"
	"golang.org/x/mod/semver"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// ErrNoPreviousRelease is in the refusal of a workflow_dispatch or
// release event that has no release tag before its commit (a first
// release), so perfgate check can tell a lane the repository cannot
// exercise yet from a lane that fails, by the rule that resolves it.
var ErrNoPreviousRelease = errors.New("no release tag")

// release: the previous release tag before the release's own commit.
func (rs *resolver) release() (*Choice, error) {
	tag := rs.ev.Tag
	tagged, err := rs.commit("refs/tags/"+tag, "the release's tag")
	var m *errMissing
	if err != nil && !errors.As(err, &m) {
		return nil, err
	}
	if rs.ev.SHA == "" {
		if err != nil {
			return nil, missingf("the release's tag %s is not in this clone: fetch the tags (git fetch --tags origin)", tag)
		}
		return rs.fromPreviousTag(tagged, tag, "release "+tag)
	}
	// GitHub's GITHUB_SHA is the tag's commit; a clone without tags still
	// has the commit itself. A head given beside an existing tag on
	// another commit contradicts it, and judging either one silently
	// would name a base for a commit the caller did not mean.
	head, herr := rs.head()
	if herr != nil {
		return nil, herr
	}
	if err == nil && tagged.Hash != head.Hash {
		return nil, exit.Refusef("the release's tag %s is on `%s`, but the judged commit %q is `%s`: a release is judged at its tag's commit, so judge `%s` (or leave the head out), or name the tag of `%s`'s own release (a tag not created yet counts as on the judged commit)",
			tag, event.ShortSHA(tagged.Hash.String()), rs.ev.SHA, event.ShortSHA(head.Hash.String()), event.ShortSHA(tagged.Hash.String()), event.ShortSHA(head.Hash.String()))
	}
	return rs.fromPreviousTag(head, tag, "release "+tag)
}

// version reads a release tag: vMAJOR.MINOR.PATCH or MAJOR.MINOR.PATCH.
// Pre-releases (v1.2.0-rc.1) are not releases a base is taken from, and
// any other name (nightly, 2024-05-01, v1.2) is not a release tag at all.
func version(tag string) (string, bool) {
	v := tag
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !semver.IsValid(v) || semver.Prerelease(v) != "" || semver.Canonical(v) != strings.SplitN(v, "+", 2)[0] {
		return "", false
	}
	return v, true
}

// previousTag is the highest release tag whose commit is reachable from
// head and is not head itself, below current when current is a version.
func (rs *resolver) previousTag(head *object.Commit, current string) (tagRef, error) {
	if rs.shallow {
		// Tags are only as reachable as the history the clone holds, and a
		// shallow checkout fetches neither.
		return tagRef{}, missingf("shallow clone")
	}
	hs := head.Hash.String()
	tags, err := rs.git.tags(rs.ctx, "")
	if err != nil {
		return tagRef{}, err
	}
	bound, bounded := version(current)
	type cand struct {
		tagRef
		v string
	}
	var cands []cand
	for _, t := range tags {
		v, ok := version(t.name)
		if !ok || t.commit == hs {
			continue
		}
		if bounded && semver.Compare(v, bound) >= 0 {
			continue
		}
		cands = append(cands, cand{t, v})
	}
	sort.Slice(cands, func(i, j int) bool {
		if c := semver.Compare(cands[i].v, cands[j].v); c != 0 {
			return c > 0
		}
		// v1.2.0 and 1.2.0 on different commits: the v-prefixed one wins,
		// and the order never depends on the ref listing.
		return cands[i].name > cands[j].name
	})
	// The highest candidate is nearly always reachable, and asking git
	// about one tag walks only the commits between it and head. Tags on
	// branches head never merged (backports) fail that test; past a few of
	// them one walk over the whole history answers for all the rest.
	const probes = 8
	for i, c := range cands {
		if i == probes {
			merged, err := rs.git.tags(rs.ctx, hs)
			if err != nil {
				return tagRef{}, err
			}
			reach := map[string]bool{}
			for _, t := range merged {
				reach[t.name] = true
			}
			for _, c := range cands[probes:] {
				if reach[c.name] {
					return c.tagRef, nil
				}
			}
			return tagRef{}, nil
		}
		ok, err := rs.git.isAncestor(rs.ctx, c.commit, hs)
		if err != nil {
			return tagRef{}, err
		}
		if ok {
			return c.tagRef, nil
		}
	}
	return tagRef{}, nil
}

// fromPreviousTag takes the previous release tag as the base, or when it
// carries no gate contract the oldest commit after it that does.
func (rs *resolver) fromPreviousTag(head *object.Commit, current, what string) (*Choice, error) {
	prev, err := rs.previousTag(head, current)
	if err != nil {
		return nil, err
	}
	hs := head.Hash.String()
	if prev.name == "" {
		return nil, exit.Refusef("%w (vMAJOR.MINOR.PATCH) is reachable from %s `%s` other than its own, so there is no previous release to judge it against: the first release names no base", ErrNoPreviousRelease, what, event.ShortSHA(hs))
	}
	tagCommit, err := rs.commit(prev.commit, "the previous release "+prev.name)
	if err != nil {
		return nil, err
	}
	ok, why := true, ""
	if rs.has != nil {
		if ok, why, err = rs.has(tagCommit); err != nil {
			return nil, fmt.Errorf("reading the gate contract of %s: %w", prev.name, err)
		}
	}
	if ok {
		return &Choice{Commit: prev.commit, PreviousTag: prev.name,
			Reason: fmt.Sprintf("The base is `%s`, the previous release %s.", prev.commit, prev.name)}, nil
	}
	chain, err := rs.afterTag(tagCommit, head)
	if err != nil {
		return nil, err
	}
	for _, c := range chain {
		got, _, err := rs.has(c)
		if err != nil {
			return nil, fmt.Errorf("reading the gate contract of %s: %w", event.ShortSHA(c.Hash.String()), err)
		}
		if got {
			cs := c.Hash.String()
			return &Choice{Commit: cs, PreviousTag: prev.name,
				Reason: fmt.Sprintf("The base is `%s`, the oldest commit after %s that carries the gate contract, since %s %s.", cs, prev.name, prev.name, clause(why))}, nil
		}
	}
	return nil, exit.Refusef("no commit carries the gate contract: the previous release %s %s, and neither does any of the %s after it up to %s `%s` (add the gate contract: docs/contract.md)", prev.name, clause(why), plural(len(chain), "commit"), what, event.ShortSHA(hs))
}

// afterTag lists, oldest first, the commits on head's first-parent line
// that descend from the tag's commit, head excluded (the base is never the
// head itself). The first-parent line is the branch's own sequence of
// commits and merges, so "the oldest commit after the tag" is the first
// state of the branch after the release, not a commit inside a side branch.
func (rs *resolver) afterTag(tag, head *object.Commit) ([]*object.Commit, error) {
	desc, err := rs.git.descendants(rs.ctx, tag.Hash.String(), head.Hash.String())
	if err != nil {
		return nil, err
	}
	var chain []*object.Commit
	c, err := rs.firstParent(head)
	for err == nil && c != nil && desc[c.Hash.String()] {
		if e := rs.ctx.Err(); e != nil {
			return nil, e
		}
		chain = append(chain, c)
		c, err = rs.firstParent(c)
	}
	if err != nil {
		return nil, err
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
