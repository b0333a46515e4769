package publish

import (
	"context"

	"github.com/perfgate/perfgate/internal/verdict"
)

// The verdict service's port, implemented over the API areas above.
var _ verdict.Publisher = (*Client)(nil)

// CheckInProgress marks the check named t.Name on t.SHA in progress,
// creating it the first time (verdict.Publisher).
func (c *Client) CheckInProgress(ctx context.Context, t verdict.CheckTarget) error {
	_, err := c.StartCheck(ctx, t.Owner, t.Repo, StartCheckOptions{SHA: t.SHA, Name: t.Name})
	return err
}

// CheckCompleted completes the check named t.Name on t.SHA with the
// verdict (verdict.Publisher).
func (c *Client) CheckCompleted(ctx context.Context, t verdict.CheckTarget, o verdict.Outcome) error {
	_, err := c.CompleteCheck(ctx, t.Owner, t.Repo, CompleteCheckOptions{SHA: t.SHA, Name: t.Name, Outcome: o})
	return err
}

// UpsertComment writes the one comment for (t.PR, t.Plan); nothing when
// the event has no pull request (verdict.Publisher).
func (c *Client) UpsertComment(ctx context.Context, t verdict.CheckTarget, markdown string) error {
	if t.PR == 0 {
		return nil
	}
	_, err := c.UpsertPRComment(ctx, t.Owner, t.Repo, CommentOptions{PR: t.PR, Plan: t.Plan, Body: markdown})
	return err
}

// SetReleaseLine puts line into the release body of tag once, between
// t.Plan's markers (verdict.Publisher).
func (c *Client) SetReleaseLine(ctx context.Context, t verdict.CheckTarget, tag, line string) error {
	return c.SetReleaseNotesLine(ctx, t.Owner, t.Repo, ReleaseLineOptions{Tag: tag, Plan: t.Plan, Line: line})
}
