package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v62/github"
)

// releasesPermission is what a token needs to edit a release's body.
const releasesPermission = "contents: write"

// The markers around perfgate's line in a release body: a later call
// replaces what lies between them, so the body holds one perfgate line
// however often the release workflow runs.
const (
	releaseLineStart = "<!-- perfgate:release-line -->"
	releaseLineEnd   = "<!-- /perfgate:release-line -->"
)

// ReleaseLineOptions names the release and the line for its notes.
type ReleaseLineOptions struct {
	Tag  string
	Line string
}

// SetReleaseNotesLine puts opts.Line into the body of the release tagged
// opts.Tag, once: an earlier perfgate line (between the markers) is
// replaced, and a body that already holds this line is not edited. A draft
// release, which GitHub does not find by tag, is looked for in the list of
// releases. An empty line is refused: it means the gate named no base, and
// a release must not claim a comparison that did not happen.
func (c *Client) SetReleaseNotesLine(ctx context.Context, owner, repo string, opts ReleaseLineOptions) error {
	switch {
	case owner == "" || repo == "":
		return errors.New("publishing a release line: the repository's owner and name are both needed")
	case opts.Tag == "":
		return errors.New("publishing a release line: no release tag given")
	case strings.TrimSpace(opts.Line) == "":
		return fmt.Errorf("publishing the release line for %s: the line is empty, so the gate named no base; the release notes cannot say what it was compared with", opts.Tag)
	case strings.ContainsAny(opts.Line, "\r\n"):
		return fmt.Errorf("publishing the release line for %s: it spans several lines (want one line)", opts.Tag)
	}
	rel, err := c.releaseByTag(ctx, owner, repo, opts.Tag)
	if err != nil {
		return err
	}
	body := withReleaseLine(rel.GetBody(), opts.Line)
	if body == rel.GetBody() {
		return nil
	}
	if _, _, err := c.gh.Repositories.EditRelease(ctx, owner, repo, rel.GetID(), &github.RepositoryRelease{Body: &body}); err != nil {
		return failed(err, releasesPermission, "editing the body of release %s (%d)", opts.Tag, rel.GetID())
	}
	return nil
}

// releaseByTag finds a published release by its tag, or a draft one by
// paging through the releases.
func (c *Client) releaseByTag(ctx context.Context, owner, repo, tag string) (*github.RepositoryRelease, error) {
	rel, resp, err := c.gh.Repositories.GetReleaseByTag(ctx, owner, repo, tag)
	if err == nil {
		return rel, nil
	}
	if resp == nil || resp.StatusCode != http.StatusNotFound {
		return nil, failed(err, releasesPermission, "reading release %s", tag)
	}
	opts := &github.ListOptions{PerPage: 100}
	for {
		rels, resp, err := c.gh.Repositories.ListReleases(ctx, owner, repo, opts)
		if err != nil {
			return nil, failed(err, releasesPermission, "listing releases to find the draft tagged %s", tag)
		}
		for _, r := range rels {
			if r.GetTagName() == tag {
				return r, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, fmt.Errorf("publishing the release line: %s/%s has no release tagged %s, published or draft (create the release first)", owner, repo, tag)
		}
		opts.Page = resp.NextPage
	}
}

// withReleaseLine returns body with line between perfgate's markers,
// replacing what an earlier call put there, or appended at the end.
func withReleaseLine(body, line string) string {
	block := releaseLineStart + "\n" + line + "\n" + releaseLineEnd
	// The start nearest before the first end: a start marker someone left
	// without its end must not make the edit swallow the notes after it.
	if end := strings.Index(body, releaseLineEnd); end >= 0 {
		if start := strings.LastIndex(body[:end], releaseLineStart); start >= 0 {
			return body[:start] + block + body[end+len(releaseLineEnd):]
		}
	}
	if strings.TrimSpace(body) == "" {
		return block
	}
	return strings.TrimRight(body, "\n") + "\n\n" + block
}
