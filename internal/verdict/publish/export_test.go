package publish

import "testing"

// FakeGitHub is the recording fake of GitHub's REST API (fake_github_test.go)
// for the end-to-end test of the service, which runs in package
// publish_test because it drives the perfgate command and the daemon.
type FakeGitHub struct{ f *fakeGitHub }

// FakeToken is the token the fake accepts, as GITHUB_TOKEN would be.
const FakeToken = fakeToken

// FakeCheck is one check run as the fake holds it.
type FakeCheck struct {
	ID                                int64
	Name, HeadSHA, Status, Conclusion string
	Title, Summary                    string
	AnnotationPaths                   []string
}

// FakeComment is one pull-request comment as the fake holds it.
type FakeComment struct {
	ID   int64
	Body string
}

// NewFakeGitHub serves the fake until t's Cleanup.
func NewFakeGitHub(t *testing.T) *FakeGitHub { return &FakeGitHub{f: newFakeGitHub(t)} }

// APIURL is the fake's API root, as GITHUB_API_URL names GitHub's.
func (g *FakeGitHub) APIURL() string { return g.f.apiURL() }

// Checks are the check runs on sha, oldest first.
func (g *FakeGitHub) Checks(sha string) []FakeCheck {
	var out []FakeCheck
	for _, r := range g.f.runsOn(sha) {
		c := FakeCheck{ID: r.ID, Name: r.Name, HeadSHA: r.HeadSHA, Status: r.Status, Conclusion: r.Conclusion, Title: r.Title, Summary: r.Summary}
		for _, a := range r.Annotations {
			c.AnnotationPaths = append(c.AnnotationPaths, a.Path)
		}
		out = append(out, c)
	}
	return out
}

// Comments are the comments on pull request pr, oldest first.
func (g *FakeGitHub) Comments(pr int) []FakeComment {
	var out []FakeComment
	for _, c := range g.f.commentsOn(pr) {
		out = append(out, FakeComment{ID: c.ID, Body: c.Body})
	}
	return out
}

// AddRelease makes a release (a draft, as release.yml makes it first).
func (g *FakeGitHub) AddRelease(tag, body string, draft bool) { g.f.addRelease(tag, body, draft) }

// ReleaseBody is the body of the release tagged tag.
func (g *FakeGitHub) ReleaseBody(tag string) string { return g.f.releaseBody(tag) }

// Calls counts the recorded requests with method ("" for any) whose path
// ends in suffix.
func (g *FakeGitHub) Calls(method, suffix string) int { return len(g.f.callsTo(method, suffix)) }
