package base_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

const legacyWhy = "carries neither perf/arm.env nor a scripts/perf/gate.sh whose gateway_env() sets a gateway's overrides"

// Every test here runs in parallel (t.Parallel): each builds its own
// repository in a folder of its own, and their time is git's processes,
// which then use the core the other test binary of a go test leaves idle
// while its tests wait.

// gateFile is the contract as the tests' trees carry it; hasGate reads it
// from the commit's own tree, as the real check does.
var gateFile = map[string]string{"perf/gate.toml": "build = \"make\"\n"}

func hasGate(c *object.Commit) (bool, string, error) {
	t, err := c.Tree()
	if err != nil {
		return false, "", err
	}
	if _, err := t.FindEntry("perf/gate.toml"); err != nil {
		return false, legacyWhy, nil
	}
	return true, "", nil
}

func resolve(t *testing.T, dir string, ev *event.Event) (*base.Choice, error) {
	t.Helper()
	return base.Resolve(context.Background(), dir, ev, hasGate)
}

func mustResolve(t *testing.T, dir string, ev *event.Event) *base.Choice {
	t.Helper()
	c, err := resolve(t, dir, ev)
	if err != nil {
		t.Fatalf("resolving the %s base: %v", ev.Name, err)
	}
	if c.Note != "Performance: "+c.Reason || !strings.HasPrefix(c.Reason, "The base is `"+c.Commit+"`, ") || !strings.HasSuffix(c.Reason, ".") {
		t.Fatalf("reason and note do not name the base %s as one sentence:\n%s\n%s", c.Commit, c.Reason, c.Note)
	}
	t.Logf("%s", c.Reason)
	if c.Event != ev.Name {
		t.Fatalf("choice's event = %q, want %q", c.Event, ev.Name)
	}
	return c
}

func wantRefusal(t *testing.T, err error, contains ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("resolved a base, want a refusal mentioning %q", contains)
	}
	t.Logf("refused: %v", err)
	if exit.Code(err) != exit.CannotJudge {
		t.Fatalf("exit code %d, want 2: %v", exit.Code(err), err)
	}
	for _, c := range contains {
		if !strings.Contains(err.Error(), c) {
			t.Fatalf("refusal %q does not mention %q", err, c)
		}
	}
}

// history: main with the gate, a feature branch forked at fork, main moved
// on twice after the fork.
type history struct {
	repo                    *gittest.Repo
	root, fork, feat, tip   string
	mergeCommit, afterMerge string
}

func prHistory(t *testing.T) history {
	t.Helper()
	r := gittest.New(t)
	h := history{repo: r}
	h.root = r.Commit("root", gateFile)
	h.fork = r.Commit("fork point", map[string]string{"a.txt": "a\n"})
	r.Git("checkout", "-q", "-b", "feature")
	r.Commit("feature 1", map[string]string{"f.txt": "1\n"})
	h.feat = r.Commit("feature 2", map[string]string{"f.txt": "2\n"})
	r.Git("checkout", "-q", "main")
	r.Commit("main moves on 1", map[string]string{"a.txt": "b\n"})
	h.tip = r.Commit("main moves on 2", map[string]string{"a.txt": "c\n"})
	// GitHub's refs/pull/N/merge: the PR merged into the base tip.
	r.Git("checkout", "-q", "-b", "pull-merge")
	h.mergeCommit = r.Merge("feature", "Merge feature into main")
	r.Git("checkout", "-q", "main")
	// main moves on again after GitHub made the merge commit.
	h.afterMerge = r.Commit("main moves on 3", map[string]string{"a.txt": "d\n"})
	return h
}

func TestPullRequest(t *testing.T) {
	t.Parallel()
	h := prHistory(t)
	clone := h.repo.Clone() // refs/remotes/origin/main, as actions/checkout leaves it
	clone.Git("checkout", "-q", "--detach", h.mergeCommit)
	for _, tc := range []struct {
		name string
		dir  string
		ev   event.Event
		want string
		says string
	}{
		{"head checked out, base moved on: the fork point", h.repo.Dir,
			event.Event{Name: event.PullRequest, SHA: "feature", BaseRef: "main"}, h.fork, "the pull request's base branch"},
		{"local flag origin/main in a clone", clone.Dir,
			event.Event{Name: event.PullRequest, SHA: h.feat, BaseRef: "origin/main"}, h.fork, "origin/main"},
		{"GitHub merge commit: its base tip, though main moved on", clone.Dir,
			event.Event{Name: event.PullRequest, SHA: h.mergeCommit, BaseRef: "main", BaseSHA: h.tip}, h.tip, "origin/main"},
		{"GitHub merge commit, HEAD by default", clone.Dir,
			event.Event{Name: event.PullRequest, BaseRef: "refs/heads/main"}, h.tip, "merge base"},
		{"base branch not fetched: the payload's base sha", h.repo.Dir,
			event.Event{Name: event.PullRequest, SHA: h.feat, BaseRef: "no-such-branch", BaseSHA: h.tip}, h.fork, h.tip[:12]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			c := mustResolve(t, tc.dir, &ev)
			if c.Commit != tc.want {
				t.Fatalf("base %s, want %s (%s)", c.Commit, tc.want, c.Reason)
			}
			if !strings.Contains(c.Reason, tc.says) {
				t.Fatalf("reason %q does not mention %q", c.Reason, tc.says)
			}
		})
	}
}

func TestPullRequestRefusals(t *testing.T) {
	t.Parallel()
	h := prHistory(t)
	orphan := h.repo
	orphan.Git("checkout", "-q", "--orphan", "unrelated")
	unrelated := orphan.Commit("unrelated root", gateFile)
	orphan.Git("checkout", "-q", "main")

	r := gittest.New(t)
	r.Commit("root without the gate", map[string]string{"x": "1\n"})
	r.Git("checkout", "-q", "-b", "adds-gate")
	addsGate := r.Commit("add the gate", gateFile)

	for _, tc := range []struct {
		name string
		dir  string
		ev   event.Event
		says []string
	}{
		{"base branch missing", h.repo.Dir, event.Event{Name: event.PullRequest, SHA: h.feat, BaseRef: "gone"}, []string{`"gone" is not in this clone`, "git fetch origin gone"}},
		{"no shared history", h.repo.Dir, event.Event{Name: event.PullRequest, SHA: unrelated, BaseRef: "main"}, []string{"share no history"}},
		{"base without the contract", r.Dir, event.Event{Name: event.PullRequest, SHA: addsGate, BaseRef: "main"}, []string{legacyWhy, "cannot run as the base arm"}},
		{"head not in clone", h.repo.Dir, event.Event{Name: event.PullRequest, SHA: strings.Repeat("ab", 20), BaseRef: "main"}, []string{"the checked-out commit", "not in this clone"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			_, err := resolve(t, tc.dir, &ev)
			wantRefusal(t, err, tc.says...)
		})
	}
}

func TestMergeGroup(t *testing.T) {
	t.Parallel()
	h := prHistory(t)
	ev := &event.Event{Name: event.MergeGroup, SHA: h.mergeCommit, BaseSHA: h.tip, BaseRef: "refs/heads/main"}
	c := mustResolve(t, h.repo.Dir, ev)
	if c.Commit != h.tip || !strings.Contains(c.Reason, "the merge group's base on main") {
		t.Fatalf("merge group base %s (%s), want %s", c.Commit, c.Reason, h.tip)
	}
	_, err := resolve(t, h.repo.Dir, &event.Event{Name: event.MergeGroup, BaseSHA: strings.Repeat("cd", 20)})
	wantRefusal(t, err, "the merge group's base_sha")
}

func TestPush(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	first := r.Commit("first", gateFile)
	c1 := r.Commit("c1", map[string]string{"a": "1\n"})
	c2 := r.Commit("c2", map[string]string{"a": "2\n"})
	c3 := r.Commit("c3", map[string]string{"a": "3\n"})
	// A force push rewrote c2..c3 into c2'..c3' on top of c1.
	r.Git("checkout", "-q", "-b", "rewritten", c1)
	r.Commit("c2 rewritten", map[string]string{"a": "2'\n"})
	rewritten := r.Commit("c3 rewritten", map[string]string{"a": "3'\n"})
	// A new branch made from c2 with two commits of its own.
	r.Git("checkout", "-q", "-b", "topic", c2)
	r.Commit("t1", map[string]string{"t": "1\n"})
	topic := r.Commit("t2", map[string]string{"t": "2\n"})
	r.Git("checkout", "-q", "main")

	for _, tc := range []struct {
		name string
		ev   event.Event
		want string
		says string
	}{
		{"fast-forward: the commit before", event.Event{Name: event.Push, SHA: c3, Before: c1, Ref: "refs/heads/main"}, c1, "the commit before the push"},
		{"force push: the last shared commit", event.Event{Name: event.Push, SHA: rewritten, Before: c3, Forced: true, Ref: "refs/heads/main"}, c1, "force-pushed history"},
		{"zero before, new branch: where it left the default branch", event.Event{Name: event.Push, SHA: topic, Before: event.ZeroSHA, BaseRef: "main", Ref: "refs/heads/topic"}, c2, "where the pushed branch left main"},
		{"zero before on the default branch: the parent", event.Event{Name: event.Push, SHA: c3, Before: event.ZeroSHA, BaseRef: "main", Ref: "refs/heads/main"}, c2, "the parent of the pushed commit"},
		{"zero before, branch at an existing commit: the parent", event.Event{Name: event.Push, SHA: c2, Before: event.ZeroSHA, BaseRef: "main", Ref: "refs/heads/copy"}, c1, "the parent of the pushed commit"},
		{"force push dropped the old tip from the clone", event.Event{Name: event.Push, SHA: rewritten, Before: strings.Repeat("ef", 20), Forced: true, BaseRef: "main", Ref: "refs/heads/rewritten"}, c1, "is not in the clone"},
		{"second commit: its parent, the first", event.Event{Name: event.Push, SHA: c1, Before: event.ZeroSHA}, first, "parent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			c := mustResolve(t, r.Dir, &ev)
			if c.Commit != tc.want {
				t.Fatalf("base %s, want %s (%s)", c.Commit, tc.want, c.Reason)
			}
			if !strings.Contains(c.Reason, tc.says) {
				t.Fatalf("reason %q does not mention %q", c.Reason, tc.says)
			}
		})
	}
	t.Run("first commit: no base", func(t *testing.T) {
		_, err := resolve(t, r.Dir, &event.Event{Name: event.Push, SHA: first, Before: event.ZeroSHA, BaseRef: "main", Ref: "refs/heads/main"})
		wantRefusal(t, err, "first commit", "no base")
	})
}

// releases: v0.0.15 and v0.0.16 without the contract, the contract added
// after v0.0.16 (in a side branch merged into main), then v0.0.17.
type releases struct {
	repo                                     *gittest.Repo
	v15, v16, before, merge, after, v17, v18 string
}

func releaseHistory(t *testing.T) releases {
	t.Helper()
	r := gittest.New(t)
	x := releases{repo: r}
	x.v15 = r.Commit("0.0.15", map[string]string{"scripts/perf/gate.sh": "build\n"})
	r.Tag("v0.0.15", "HEAD", true)
	x.v16 = r.Commit("0.0.16", map[string]string{"a": "16\n"})
	r.Tag("v0.0.16", "HEAD", true)
	r.Tag("nightly", "HEAD", false)
	x.before = r.Commit("fix after 0.0.16", map[string]string{"a": "16.1\n"})
	r.Git("checkout", "-q", "-b", "gate")
	r.Commit("gate: contract", gateFile)
	r.Commit("gate: more", map[string]string{"perf/plan.toml": "rate = 20\n"})
	r.Git("checkout", "-q", "main")
	x.merge = r.Merge("gate", "Merge the gate")
	x.after = r.Commit("another change", map[string]string{"a": "16.2\n"})
	r.Tag("release-candidate", "HEAD", false) // not semver
	r.Tag("v0.0.99-rc.1", "HEAD", true)       // pre-release
	r.Tag("v0.1", "HEAD", false)              // not a full version
	x.v17 = r.Commit("0.0.17", map[string]string{"a": "17\n"})
	r.Tag("v0.0.17", "HEAD", true)
	x.v18 = r.Commit("0.0.18", map[string]string{"a": "18\n"})
	r.Tag("0.0.18", "HEAD", false) // no v prefix: still a release
	// A higher version on a branch main never merged: not reachable.
	r.Git("checkout", "-q", "-b", "maint", x.v16)
	r.Commit("backport", map[string]string{"b": "1\n"})
	r.Tag("v9.9.9", "HEAD", false)
	r.Git("checkout", "-q", "main")
	return x
}

func TestReleaseAndDispatch(t *testing.T) {
	t.Parallel()
	x := releaseHistory(t)
	for _, tc := range []struct {
		name    string
		ev      event.Event
		want    string
		prevTag string
		reason  string
	}{
		{"release whose previous tag carries the contract", event.Event{Name: event.Release, Tag: "0.0.18"}, x.v17, "v0.0.17", "the previous release v0.0.17."},
		{"release whose previous tag predates the contract", event.Event{Name: event.Release, Tag: "v0.0.17", SHA: x.v17}, x.merge, "v0.0.16",
			"The base is `" + x.merge + "`, the oldest commit after v0.0.16 that carries the gate contract, since v0.0.16 " + legacyWhy + "."},
		{"dispatch at a tagged commit skips its own tag", event.Event{Name: event.WorkflowDispatch, SHA: x.v17}, x.merge, "v0.0.16", "oldest commit after v0.0.16"},
		{"dispatch between releases", event.Event{Name: event.WorkflowDispatch, SHA: x.after}, x.merge, "v0.0.16", "oldest commit after v0.0.16"},
		{"dispatch at HEAD", event.Event{Name: event.WorkflowDispatch}, x.v17, "v0.0.17", "previous release v0.0.17"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			c := mustResolve(t, x.repo.Dir, &ev)
			if c.Commit != tc.want || c.PreviousTag != tc.prevTag {
				t.Fatalf("base %s after %s (%s), want %s after %s", c.Commit, c.PreviousTag, c.Reason, tc.want, tc.prevTag)
			}
			if !strings.Contains(c.Reason, tc.reason) {
				t.Fatalf("reason %q does not say %q", c.Reason, tc.reason)
			}
		})
	}
}

func TestReleaseRefusals(t *testing.T) {
	t.Parallel()
	x := releaseHistory(t)
	r := gittest.New(t)
	r.Commit("one", map[string]string{"a": "1\n"})
	r.Tag("v1.0.0", "HEAD", false)
	r.Commit("two", map[string]string{"a": "2\n"})
	r.Commit("three", map[string]string{"a": "3\n"})
	r.Tag("v1.1.0", "HEAD", false)
	for _, tc := range []struct {
		name string
		dir  string
		ev   event.Event
		says []string
	}{
		{"no contract anywhere", r.Dir, event.Event{Name: event.Release, Tag: "v1.1.0"}, []string{"no commit carries the gate contract", "v1.0.0 " + legacyWhy, "any of the 1 commit after it"}},
		{"first release", x.repo.Dir, event.Event{Name: event.Release, Tag: "v0.0.15"}, []string{"no previous release", "names no base"}},
		{"release tag not fetched and no sha", x.repo.Dir, event.Event{Name: event.Release, Tag: "v7.0.0"}, []string{"tag v7.0.0 is not in this clone", "git fetch --tags"}},
		{"head given elsewhere than the release's tag", x.repo.Dir, event.Event{Name: event.Release, Tag: "v0.0.17", SHA: x.after},
			[]string{"the release's tag v0.0.17 is on `" + event.ShortSHA(x.v17) + "`", "judged commit \"" + x.after + "\" is `" + event.ShortSHA(x.after) + "`", "judged at its tag's commit"}},
		{"head given as a revision elsewhere than the tag", x.repo.Dir, event.Event{Name: event.Release, Tag: "v0.0.16", SHA: "HEAD"},
			[]string{"the release's tag v0.0.16 is on `" + event.ShortSHA(x.v16) + "`"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			_, err := resolve(t, tc.dir, &ev)
			wantRefusal(t, err, tc.says...)
			// Only the first release's refusal is perfgate check's skip.
			if got, want := errors.Is(err, base.ErrNoPreviousRelease), tc.name == "first release"; got != want {
				t.Fatalf("errors.Is(err, ErrNoPreviousRelease) = %v, want %v: %v", got, want, err)
			}
		})
	}
}

// TestNoPreviousReleaseIsOneError: every way of finding no release before
// the judged commit (tags that are no releases, none at all) is refused
// with ErrNoPreviousRelease, for both events that need one.
func TestNoPreviousReleaseIsOneError(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Commit("one", gateFile)
	for _, tag := range []string{"v0.1.0-rc.1", "v1.2", "vnext", "nightly"} {
		r.Tag(tag, "HEAD", true)
	}
	head := r.Commit("two", map[string]string{"a": "2\n"})
	r.Tag("v2.0.0", "HEAD", true)
	for _, ev := range []event.Event{
		{Name: event.WorkflowDispatch},
		{Name: event.Release, Tag: "v2.0.0"},
		{Name: event.Release, Tag: "v3.0.0", SHA: head},
	} {
		t.Run(ev.Name+" "+ev.Tag, func(t *testing.T) {
			_, err := resolve(t, r.Dir, &ev)
			wantRefusal(t, err, "no release tag", "the first release names no base")
			if !errors.Is(err, base.ErrNoPreviousRelease) {
				t.Fatalf("the refusal does not wrap ErrNoPreviousRelease: %v", err)
			}
		})
	}
}

// TestRevisionsWithSpaces: git echoes a revision it cannot read with its
// spaces ("HEAD ~3^{commit} missing"); such a revision names nothing, is
// refused naming it, and leaves the object reader working for the next
// lookup, while a revision with spaces that git reads still resolves.
func TestRevisionsWithSpaces(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	first := r.Commit("first", gateFile)
	second := r.Commit("fix the bug", map[string]string{"a": "1\n"})
	third := r.Commit("third", map[string]string{"a": "2\n"})
	t.Run("a mistyped --before is refused naming it", func(t *testing.T) {
		_, err := resolve(t, r.Dir, &event.Event{Name: event.Push, SHA: third, Before: "HEAD ~3"})
		wantRefusal(t, err, `"HEAD ~3", names no commit in this clone`, "give --before a commit")
	})
	t.Run("a base branch with a space falls back to the payload's base sha", func(t *testing.T) {
		// The branch lookups miss; the base sha after them must still
		// be read.
		c := mustResolve(t, r.Dir, &event.Event{Name: event.PullRequest, SHA: third, BaseRef: "feature x", BaseSHA: first})
		if c.Commit != first {
			t.Fatalf("base %s, want %s", c.Commit, first)
		}
	})
	t.Run("a revision with a space git reads", func(t *testing.T) {
		c := mustResolve(t, r.Dir, &event.Event{Name: event.Push, SHA: third, Before: "HEAD^{/fix the bug}"})
		if c.Commit != second {
			t.Fatalf("base %s, want %s", c.Commit, second)
		}
	})
}

func TestShallowClone(t *testing.T) {
	t.Parallel()
	h := prHistory(t)
	h.repo.Tag("v1.0.0", h.root, false)
	h.repo.Git("checkout", "-q", "pull-merge")
	shallow := h.repo.Clone("--depth", "1", "--no-single-branch")
	for _, ev := range []event.Event{
		{Name: event.PullRequest, BaseRef: "main"},
		{Name: event.Push, Before: h.fork},
		{Name: event.Push, Before: event.ZeroSHA, BaseRef: "main", Ref: "refs/heads/pull-merge"},
		{Name: event.WorkflowDispatch},
		{Name: event.Release, Tag: "v1.1.0", SHA: h.mergeCommit},
		{Name: event.MergeGroup, BaseSHA: h.tip},
	} {
		t.Run(ev.Name, func(t *testing.T) {
			_, err := resolve(t, shallow.Dir, &ev)
			wantRefusal(t, err, "shallow", "set `fetch-depth: 0`")
			if strings.Count(err.Error(), ":") > 2 {
				t.Fatalf("want one message, got a chain: %v", err)
			}
		})
	}
}

func TestNotARepository(t *testing.T) {
	t.Parallel()
	_, err := resolve(t, t.TempDir(), &event.Event{Name: event.WorkflowDispatch})
	wantRefusal(t, err, "opening the git repository", "run the gate inside")
}

func TestResolveCancelled(t *testing.T) {
	t.Parallel()
	x := releaseHistory(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := base.Resolve(ctx, x.repo.Dir, &event.Event{Name: event.WorkflowDispatch}, hasGate)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled resolve returned %v, want context.Canceled", err)
	}
}

func TestFileRoundTrip(t *testing.T) {
	t.Parallel()
	x := releaseHistory(t)
	c := mustResolve(t, x.repo.Dir, &event.Event{Name: event.Release, Tag: "v0.0.17"})
	path := filepath.Join(t.TempDir(), "target", "perf-base", "base.md")
	if err := base.WriteFile(path, c); err != nil {
		t.Fatal(err)
	}
	got, err := base.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if *got != *c {
		t.Fatalf("read back %+v, wrote %+v", got, c)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "# Performance base\n\n" + c.Reason + "\n\n- commit: `" + c.Commit + "`\n- event: release\n- previous release: v0.0.16\n\nRelease notes line:\n\n" + c.Note + "\n"
	if string(data) != want {
		t.Fatalf("base.md:\n%s\nwant:\n%s", data, want)
	}
}

func TestReadFileRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		says          []string
	}{
		{"missing", "", []string{"does not exist", "named no base"}},
		{"no commit", "# Performance base\n\nPerformance: The base is nothing.\n", []string{"names no base"}},
		{"short commit", "- commit: `abc123`\n", []string{"base.md:1:", "not a full commit hash"}},
		{"no note", "- commit: `" + strings.Repeat("a", 40) + "`\n", []string{"release-notes line"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name, "base.md")
			if tc.content != "" {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			_, err := base.ReadFile(path)
			wantRefusal(t, err, tc.says...)
		})
	}
}

// Many higher tags on a branch head never merged (backports) are passed
// over, first one by one, then by one walk over the whole history.
func TestPreviousTagPastManyUnmergedTags(t *testing.T) {
	t.Parallel()
	r := gittest.New(t)
	r.Commit("1.0.0", gateFile)
	r.Tag("v1.0.0", "HEAD", false)
	r.Commit("1.1.0", map[string]string{"a": "1\n"})
	r.Tag("v1.1.0", "HEAD", false)
	r.Git("checkout", "-q", "-b", "maint", "v1.1.0")
	for i := 1; i <= 12; i++ {
		r.Commit("backport", map[string]string{"b": strings.Repeat("x", i) + "\n"})
		r.Tag(fmt.Sprintf("v1.1.%d", i), "HEAD", false)
	}
	r.Git("checkout", "-q", "main")
	head := r.Commit("2.0.0", map[string]string{"a": "2\n"})
	tags := r.Git("tag", "--list", "v1.1.?*")
	if n := len(strings.Fields(tags)); n != 13 { // v1.1.0 and its twelve backports
		t.Fatalf("made %d v1.1.x tags, want 13: %s", n, tags)
	}
	c := mustResolve(t, r.Dir, &event.Event{Name: event.WorkflowDispatch, SHA: head})
	if c.PreviousTag != "v1.1.0" {
		t.Fatalf("previous tag %s, want v1.1.0 (%s)", c.PreviousTag, c.Reason)
	}
}
