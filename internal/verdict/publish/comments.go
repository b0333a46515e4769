package publish

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/google/go-github/v62/github"
)

// commentsPermission is what a token needs to write pull-request comments
// (they are issue comments in GitHub's API).
const commentsPermission = "pull-requests: write"

// CommentOptions is the one comment perfgate keeps on a pull request for a
// plan.
type CommentOptions struct {
	PR   int
	Plan string
	// Body is the Markdown; the hidden marker is put before it.
	Body string
}

// Marker is the hidden line that starts perfgate's comment for a plan, so a
// later run finds the comment and edits it instead of posting another.
// Every plan has its own marker: two plans on one pull request never
// overwrite each other's comment. The name is escaped so that it cannot
// end the HTML comment early.
func Marker(plan string) string {
	return "<!-- perfgate:plan=" + url.PathEscape(plan) + " -->"
}

// UpsertPRComment writes the comment for (opts.PR, opts.Plan): it pages
// through every comment on the pull request (not only the newest 100),
// edits the one whose body starts with the plan's marker, and posts a new
// one only when none does. A comment that merely quotes the marker does not
// start with it and is left alone. It returns the comment's ID.
func (c *Client) UpsertPRComment(ctx context.Context, owner, repo string, opts CommentOptions) (int64, error) {
	if owner == "" || repo == "" {
		return 0, errors.New("publishing a comment: the repository's owner and name are both needed")
	}
	if opts.PR <= 0 {
		return 0, fmt.Errorf("publishing a comment: %d is not a pull request number", opts.PR)
	}
	marker := Marker(opts.Plan)
	body, _ := cut(marker+"\n"+opts.Body, MaxCommentBody)

	existing, err := c.findComment(ctx, owner, repo, opts.PR, marker)
	if err != nil {
		return 0, err
	}
	if existing != nil {
		if existing.GetBody() == body {
			return existing.GetID(), nil
		}
		edited, _, err := c.gh.Issues.EditComment(ctx, owner, repo, existing.GetID(), &github.IssueComment{Body: &body})
		if err != nil {
			return 0, failed(err, commentsPermission, "editing perfgate's comment %d on pull request #%d", existing.GetID(), opts.PR)
		}
		return edited.GetID(), nil
	}
	created, _, err := c.gh.Issues.CreateComment(ctx, owner, repo, opts.PR, &github.IssueComment{Body: &body})
	if err != nil {
		return 0, failed(err, commentsPermission, "commenting on pull request #%d", opts.PR)
	}
	return created.GetID(), nil
}

// findComment returns the oldest comment on the pull request whose body
// starts with marker, reading every page.
func (c *Client) findComment(ctx context.Context, owner, repo string, pr int, marker string) (*github.IssueComment, error) {
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.gh.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return nil, failed(err, commentsPermission, "listing comments on pull request #%d (page %d)", pr, max(opts.Page, 1))
		}
		for _, cm := range comments {
			if strings.HasPrefix(cm.GetBody(), marker) {
				return cm, nil
			}
		}
		if resp.NextPage == 0 {
			return nil, nil
		}
		opts.Page = resp.NextPage
	}
}
