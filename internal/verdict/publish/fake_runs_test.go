package publish

import (
	"net/http"
	"strconv"
	"strings"
)

// fakeWorkflowRun is GitHub's record of one workflow run, which the
// verdict service holds each posted attempt against.
type fakeWorkflowRun struct {
	Event      string
	HeadSHA    string
	RunAttempt int
	PRs        []int
}

// runRoutes serves what the verdict service reads besides publishing: the
// record of a run, and GET /installation/repositories, which its start
// asks to tell an installation token (as the fake's token is, like
// GITHUB_TOKEN) from a personal one.
func (f *fakeGitHub) runRoutes(api *http.ServeMux) {
	api.HandleFunc("GET /installation/repositories", func(w http.ResponseWriter, r *http.Request) {
		f.writeJSON(w, http.StatusOK, map[string]any{"total_count": 0, "repositories": []any{}})
	})
	api.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		f.mu.Lock()
		run, ok := f.workflowRuns[id]
		f.mu.Unlock()
		if !ok {
			f.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run"})
			return
		}
		full := r.PathValue("owner") + "/" + r.PathValue("repo")
		repo := map[string]any{"id": 4242, "name": r.PathValue("repo"), "full_name": full}
		prs := []any{}
		for _, n := range run.PRs {
			prs = append(prs, map[string]any{"number": n, "head": map[string]any{"sha": run.HeadSHA}, "base": map[string]any{"ref": "main"}})
		}
		f.writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "name": "perf", "head_branch": "feature", "head_sha": run.HeadSHA, "path": ".github/workflows/perf.yml",
			"run_attempt": run.RunAttempt, "event": run.Event, "status": "in_progress", "pull_requests": prs,
			"repository": repo, "head_repository": repo,
		})
	})
}

// AddWorkflowRun records run id of acme/api as GitHub would show it: its
// event, head commit, newest run attempt and linked pull requests.
func (g *FakeGitHub) AddWorkflowRun(id int64, event, headSHA string, runAttempt int, prs ...int) {
	g.f.mu.Lock()
	defer g.f.mu.Unlock()
	if g.f.workflowRuns == nil {
		g.f.workflowRuns = map[int64]fakeWorkflowRun{}
	}
	g.f.workflowRuns[id] = fakeWorkflowRun{Event: event, HeadSHA: strings.ToLower(headSHA), RunAttempt: runAttempt, PRs: prs}
}
