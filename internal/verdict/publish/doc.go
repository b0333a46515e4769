// Package publish puts perfgate's verdicts where teams decide: a check run
// on the commit GitHub shows, one comment per pull request and plan, and a
// line in the release notes. It is the only package that imports go-github,
// and it implements the verdict service's port (verdict.Publisher).
//
// One file per API area, as go-github lays them out: checks.go,
// comments.go, releases.go, auth.go. Each area's functions take
// (ctx, owner, repo, opts).
//
// It holds GitHub's side only (the calls, the pages, the limits, the
// app's authentication): what a check, comment or release line says is
// package verdict's (Outcome), and when one is published is the service's
// decision.
package publish
