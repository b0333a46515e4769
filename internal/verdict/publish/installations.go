package publish

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v62/github"

	"github.com/perfgate/perfgate/internal/verdict"
)

// relistAfter is how soon after listing the App's installations a request
// for an owner it is not installed on may list them again: an owner that
// just installed it is found within this time, and a stream of requests
// for a stranger does not list them on every one.
const relistAfter = 30 * time.Second

// installations signs each request as the GitHub App's installation on the
// owner of the repository it is for (/repos/{owner}/...), so one service
// publishes for every account the App is installed on; requests that are
// no repository's (/app, /app/installations) are signed as the App itself
// with its JWT. Installations are found through GET /app/installations and
// their tokens made and renewed by ghinstallation.
type installations struct {
	apps *ghinstallation.AppsTransport
	// prefix is the API base's path: "/" on api.github.com, "/api/v3/" on
	// GitHub Enterprise Server.
	prefix string
	// pinned is the one installation every request uses, when the operator
	// named it (--github-installation-id); 0 finds one per owner.
	pinned int64
	// list reads the App's installations (a go-github client over this
	// same transport, whose requests to /app go out signed as the App).
	list func(ctx context.Context) ([]*github.Installation, error)

	mu      sync.Mutex
	byOwner map[string]int64 // lower-case account login -> installation id
	signers map[int64]*ghinstallation.Transport
	listed  time.Time
}

func (in *installations) RoundTrip(req *http.Request) (*http.Response, error) {
	owner := repositoryOwner(strings.TrimPrefix(req.URL.Path, in.prefix))
	if owner == "" {
		return in.apps.RoundTrip(req)
	}
	signer, err := in.forOwner(req.Context(), owner)
	if err != nil {
		return nil, err
	}
	return signer.RoundTrip(req)
}

// repositoryOwner is the owner in a path "repos/{owner}/{repo}/...", or "".
func repositoryOwner(path string) string {
	rest, ok := strings.CutPrefix(path, "repos/")
	if !ok {
		return ""
	}
	owner, _, ok := strings.Cut(rest, "/")
	if !ok {
		return ""
	}
	return owner
}

// forOwner is the signer of the App's installation on owner, listing the
// App's installations again when owner is not among those known.
func (in *installations) forOwner(ctx context.Context, owner string) (*ghinstallation.Transport, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.pinned != 0 {
		return in.signer(in.pinned), nil
	}
	id, ok := in.byOwner[strings.ToLower(owner)]
	if !ok && time.Since(in.listed) > relistAfter {
		if err := in.refresh(ctx); err != nil {
			return nil, err
		}
		id, ok = in.byOwner[strings.ToLower(owner)]
	}
	if !ok {
		return nil, fmt.Errorf("the GitHub App %d is not installed on %s: install it on that account (the App's public page, Install), then post again: %w", in.apps.AppID(), owner, verdict.ErrNoAccess)
	}
	return in.signer(id), nil
}

// refresh lists the App's installations; in.mu is held.
func (in *installations) refresh(ctx context.Context) error {
	all, err := in.list(ctx)
	if err != nil {
		return err
	}
	in.byOwner = map[string]int64{}
	for _, i := range all {
		in.byOwner[strings.ToLower(i.GetAccount().GetLogin())] = i.GetID()
	}
	in.listed = time.Now()
	return nil
}

// Owners lists the accounts the App is installed on, as GitHub says now.
func (in *installations) Owners(ctx context.Context) ([]string, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if err := in.refresh(ctx); err != nil {
		return nil, err
	}
	var out []string
	for o := range in.byOwner {
		out = append(out, o)
	}
	return out, nil
}

// signer is installation id's transport, made once; in.mu is held.
func (in *installations) signer(id int64) *ghinstallation.Transport {
	if s, ok := in.signers[id]; ok {
		return s
	}
	if in.signers == nil {
		in.signers = map[int64]*ghinstallation.Transport{}
	}
	s := ghinstallation.NewFromAppsTransport(in.apps, id)
	in.signers[id] = s
	return s
}

// listInstallations reads every page of GET /app/installations with gh,
// signed as App appID.
func listInstallations(gh *github.Client, appID int64) func(ctx context.Context) ([]*github.Installation, error) {
	return func(ctx context.Context) ([]*github.Installation, error) {
		var all []*github.Installation
		opts := &github.ListOptions{PerPage: 100}
		for {
			page, resp, err := gh.Apps.ListInstallations(ctx, opts)
			if refusedStatus(err) {
				return nil, &appRefused{appID: appID, err: err}
			}
			if err != nil {
				return nil, failed(err, "", "listing GitHub App %d's installations", appID)
			}
			all = append(all, page...)
			if resp.NextPage == 0 {
				return all, nil
			}
			opts.Page = resp.NextPage
		}
	}
}
