package publish

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/verdict"
)

// releasesPermission is what a token needs to edit a release's body.
const releasesPermission = "contents: write"

// ReleaseLineMarkers are the markers around a plan's line in a release
// body: a later call replaces what lies between them, so the body holds
// one perfgate line per plan however often the release workflow runs. The
// default plan's are <!-- perfgate:release-line --> and its closing
// <!-- /perfgate:release-line -->; a named plan's add " plan=<name>",
// escaped as the comment's Marker is.
func ReleaseLineMarkers(plan string) (start, end string) {
	if plan == "" {
		return "<!-- perfgate:release-line -->", "<!-- /perfgate:release-line -->"
	}
	p := " plan=" + url.PathEscape(plan)
	return "<!-- perfgate:release-line" + p + " -->", "<!-- /perfgate:release-line" + p + " -->"
}

// ReleaseLineOptions names the release and the line for its notes.
type ReleaseLineOptions struct {
	Tag string
	// Plan is the plan the line is of ("" for the default plan): each plan
	// has its own marked line.
	Plan string
	Line string
}

// SetReleaseNotesLine puts opts.Line into the body of the release tagged
// opts.Tag, once: an earlier perfgate line of the plan (between its
// markers) is replaced, and a body that already holds this line is not
// edited. A draft release, which GitHub does not find by tag, is looked for
// in the list of releases; no release at all is verdict.ErrNoRelease, which
// the service waits out. An empty line is refused: it means the gate named
// no base, and a release must not claim a comparison that did not happen.
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
	body := withReleaseLine(rel.GetBody(), opts.Plan, opts.Line)
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
			return nil, fmt.Errorf("publishing the release line: %s/%s has no release tagged %s, published or draft (release.yml drafts it before the gate; the service writes the line once it exists): %w", owner, repo, tag, verdict.ErrNoRelease)
		}
		opts.Page = resp.NextPage
	}
}

// withReleaseLine returns body with line between plan's markers, in place
// of what an earlier call put there, or appended at the end. Every other
// block of the plan's markers goes (an edit racing another may have left
// two), so the body holds exactly one marked line of the plan.
func withReleaseLine(body, plan, line string) string {
	startMark, endMark := ReleaseLineMarkers(plan)
	block := startMark + "\n" + line + "\n" + endMark
	var out strings.Builder
	placed := false
	for {
		// The start nearest before the first end: a start marker someone
		// left without its end must not make the edit swallow the notes
		// after it.
		end := strings.Index(body, endMark)
		if end < 0 {
			break
		}
		start := strings.LastIndex(body[:end], startMark)
		if start < 0 {
			out.WriteString(body[:end+len(endMark)])
			body = body[end+len(endMark):]
			continue
		}
		out.WriteString(body[:start])
		rest := body[end+len(endMark):]
		if placed {
			// A second block: dropped with the blank line before it.
			s := strings.TrimRight(out.String(), "\n")
			out.Reset()
			out.WriteString(s)
		} else {
			out.WriteString(block)
			placed = true
		}
		body = rest
	}
	out.WriteString(body)
	if placed {
		return out.String()
	}
	all := out.String()
	if strings.TrimSpace(all) == "" {
		return block
	}
	return strings.TrimRight(all, "\n") + "\n\n" + block
}
