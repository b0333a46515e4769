// Package client talks to perfgate-verdictd's /v1 API: `perfgate verdict
// --service URL` posts each attempt and asks retry or final through it. It
// sends the job's GitHub Actions OIDC token (ActionsOIDC) or a repository
// token (StaticToken), and retries a POST that failed in transit, which is
// safe because the service files an attempt once.
//
// It holds the HTTP calls and the facts a job reads from GitHub Actions'
// environment (JobFacts); it does not decide retry or final (the service
// does) nor judge anything.
package client
