package gittest

import "testing"

// A copy carries the history and the clock: the same commit made in the
// original and in its copy has the same hash, and neither sees the
// other's commits.
func TestCopyKeepsHistoryAndClock(t *testing.T) {
	r := New(t)
	first := r.Commit("first", map[string]string{"a.txt": "a\n"})
	r.Tag("v1", "HEAD", true)
	c := r.Copy(t)
	if c.Dir == r.Dir {
		t.Fatal("the copy is the original's folder")
	}
	if got := c.Git("rev-parse", "v1^{commit}"); got != first {
		t.Fatalf("the copy's v1 is %s, want %s", got, first)
	}
	inCopy := c.Commit("second", map[string]string{"b.txt": "b\n"})
	if got := r.Git("rev-parse", "HEAD"); got != first {
		t.Fatalf("the copy's commit moved the original to %s", got)
	}
	if inOriginal := r.Commit("second", map[string]string{"b.txt": "b\n"}); inOriginal != inCopy {
		t.Errorf("the same commit is %s in the copy and %s in the original: the clock was not copied", inCopy, inOriginal)
	}
	if got := c.Git("status", "--porcelain"); got != "" {
		t.Errorf("the copy's work tree differs from its index:\n%s", got)
	}
}
