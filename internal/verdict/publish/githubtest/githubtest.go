// Package githubtest is a fake of the GitHub REST API for tests of the
// verdict service as a whole: a GitHub App with installations on several
// owners (the App's JWT checked as GitHub checks it, installation tokens
// handed out), personal tokens GitHub refuses for check runs, workflow
// runs, pull requests, check runs and pull request comments, each in the
// JSON shapes GitHub sends. Serve it and point the service's
// --github-api-url at URL.
package githubtest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// AppID is the fake App's id.
const AppID = 31337

// PersonalToken is a personal access token's shape: GitHub knows the user
// but refuses it every check run (only Apps may create them).
const PersonalToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"

// Run is a workflow run as GET /repos/{o}/{r}/actions/runs/{id} shows it.
type Run struct {
	ID         int64
	Event      string
	HeadSHA    string
	RunAttempt int
	// PRs are the pull requests GitHub links; none for a fork's.
	PRs []int
	// HeadRepository is owner/name of the head commit's repository.
	HeadRepository string
}

// PR is a pull request: its head commit, branch and the repository it is
// from.
type PR struct {
	Number   int
	HeadSHA  string
	HeadRepo string // owner/name: the fork for a fork's pull request
	HeadRef  string // the branch; "" is "feature"
}

// CheckRun is a check run as the fake holds it.
type CheckRun struct {
	ID         int64
	AppID      int64
	Name       string
	HeadSHA    string
	Status     string
	Conclusion string
	Title      string
}

// GitHub is the fake.
type GitHub struct {
	URL string // the API's base, ending in /
	// KeyFile is the App's private key (PEM) on disk, for --github-app-key.
	KeyFile string
	// ChecksPermission is the App's checks permission ("write" unless a
	// test takes it away).
	ChecksPermission string

	t      testing.TB
	key    *rsa.PrivateKey
	mu     sync.Mutex
	owners map[int64]string // installation id -> account login
	tokens map[string]int64 // installation token -> installation id
	runs   map[string]Run   // owner/repo#id
	prs    map[string]PR    // owner/repo#number
	checks []*CheckRun
	nextID int64
	// Calls are "METHOD /path" of every request, in order.
	calls []string
}

// New serves a fake GitHub for t, closed in its Cleanup, with the App
// installed on each of owners (installation ids 100, 101, ...).
func New(t testing.TB, owners ...string) *GitHub {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	g := &GitHub{t: t, key: key, ChecksPermission: "write", owners: map[int64]string{}, tokens: map[string]int64{},
		runs: map[string]Run{}, prs: map[string]PR{}, nextID: 5000}
	for i, o := range owners {
		g.owners[int64(100+i)] = o
	}
	g.KeyFile = filepath.Join(t.TempDir(), "app.pem")
	der := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if err := os.WriteFile(g.KeyFile, der, 0o600); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /app", g.app)
	mux.HandleFunc("GET /app/installations", g.installations)
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", g.accessToken)
	mux.HandleFunc("GET /installation/repositories", g.installationRepos)
	mux.HandleFunc("GET /repos/{owner}/{repo}/actions/runs/{id}", g.repo(g.getRun))
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", g.repo(g.getPR))
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", g.repo(g.listPRs))
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", g.repo(g.listChecks))
	mux.HandleFunc("POST /repos/{owner}/{repo}/check-runs", g.repo(g.createCheck))
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", g.repo(g.updateCheck))
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", g.repo(func(w http.ResponseWriter, r *http.Request, _ int64) {
		g.json(w, http.StatusOK, []any{})
	}))
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", g.repo(func(w http.ResponseWriter, r *http.Request, _ int64) {
		g.json(w, http.StatusCreated, map[string]any{"id": g.id(), "body": "", "user": map[string]any{"login": "perfgate[bot]", "type": "Bot"}})
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.calls = append(g.calls, r.Method+" "+r.URL.Path)
		g.mu.Unlock()
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.URL = srv.URL + "/"
	return g
}

// AddRun records a workflow run of owner/repo.
func (g *GitHub) AddRun(repo string, run Run) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if run.HeadRepository == "" {
		run.HeadRepository = repo
	}
	g.runs[repo+"#"+strconv.FormatInt(run.ID, 10)] = run
}

// AddPR records a pull request of owner/repo.
func (g *GitHub) AddPR(repo string, pr PR) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.prs[repo+"#"+strconv.Itoa(pr.Number)] = pr
}

// InstallationToken is a token of the App's installation on owner, as a
// job's GITHUB_TOKEN is one of the GitHub Actions App's.
func (g *GitHub) InstallationToken(owner string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	for id, o := range g.owners {
		if strings.EqualFold(o, owner) {
			tok := fmt.Sprintf("ghs_job%dtoken%d", id, g.id())
			g.tokens[tok] = id
			return tok
		}
	}
	g.t.Fatalf("fake GitHub: no installation on %s", owner)
	return ""
}

// Checks are the check runs on sha, oldest first.
func (g *GitHub) Checks(sha string) []CheckRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []CheckRun
	for _, c := range g.checks {
		if c.HeadSHA == sha {
			out = append(out, *c)
		}
	}
	return out
}

// AllChecks are every check run, oldest first.
func (g *GitHub) AllChecks() []CheckRun {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []CheckRun
	for _, c := range g.checks {
		out = append(out, *c)
	}
	return out
}

// Calls are "METHOD /path" of the requests so far.
func (g *GitHub) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}

func (g *GitHub) id() int64 { g.nextID++; return g.nextID }

func (g *GitHub) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-GitHub-Api-Version-Selected", "2022-11-28")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (g *GitHub) message(w http.ResponseWriter, status int, msg, doc string) {
	g.json(w, status, map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest/" + doc, "status": strconv.Itoa(status)})
}

// appJWT checks the App's JWT as GitHub does: RS256 with the App's key,
// issuer the App's id, at most ten minutes of life.
func (g *GitHub) appJWT(r *http.Request) error {
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return fmt.Errorf("no JWT")
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		return err
	}
	var c jwt.Claims
	if err := tok.Claims(&g.key.PublicKey, &c); err != nil {
		return err
	}
	if err := c.ValidateWithLeeway(jwt.Expected{Issuer: strconv.Itoa(AppID), Time: time.Now()}, time.Minute); err != nil {
		return err
	}
	if c.IssuedAt == nil || c.Expiry == nil || c.Expiry.Time().Sub(c.IssuedAt.Time()) > 10*time.Minute+time.Minute {
		return fmt.Errorf("iat and exp more than ten minutes apart")
	}
	return nil
}

func (g *GitHub) badJWT(w http.ResponseWriter, err error) {
	g.t.Logf("fake GitHub: App JWT refused: %v", err)
	g.message(w, http.StatusUnauthorized, "A JSON web token could not be decoded", "apps/apps#get-the-authenticated-app")
}

func (g *GitHub) app(w http.ResponseWriter, r *http.Request) {
	if err := g.appJWT(r); err != nil {
		g.badJWT(w, err)
		return
	}
	g.json(w, http.StatusOK, map[string]any{
		"id": AppID, "slug": "perfgate-test", "name": "perfgate test", "node_id": "A_1",
		"owner":       map[string]any{"login": "acme", "id": 77, "type": "Organization"},
		"permissions": map[string]any{"checks": g.ChecksPermission, "pull_requests": "write", "actions": "read", "metadata": "read"},
		"events":      []string{}, "installations_count": len(g.owners),
	})
}

func (g *GitHub) installations(w http.ResponseWriter, r *http.Request) {
	if err := g.appJWT(r); err != nil {
		g.badJWT(w, err)
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := []any{}
	for id := int64(100); id < 100+int64(len(g.owners)); id++ {
		out = append(out, map[string]any{
			"id": id, "app_id": AppID, "target_type": "Organization",
			"account":     map[string]any{"login": g.owners[id], "id": id * 10, "type": "Organization"},
			"permissions": map[string]any{"checks": g.ChecksPermission}, "repository_selection": "all",
		})
	}
	g.json(w, http.StatusOK, out)
}

func (g *GitHub) accessToken(w http.ResponseWriter, r *http.Request) {
	if err := g.appJWT(r); err != nil {
		g.badJWT(w, err)
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.owners[id]; !ok {
		g.message(w, http.StatusNotFound, "Not Found", "apps/apps#create-an-installation-access-token-for-an-app")
		return
	}
	tok := fmt.Sprintf("ghs_installation%dtoken%d", id, g.id())
	g.tokens[tok] = id
	g.json(w, http.StatusCreated, map[string]any{
		"token": tok, "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339),
		"permissions": map[string]any{"checks": g.ChecksPermission}, "repository_selection": "all",
	})
}

// installation is the installation a token belongs to; ok false with the
// answer written when the token is no installation's.
func (g *GitHub) installation(w http.ResponseWriter, r *http.Request, doc string) (int64, bool) {
	raw := strings.TrimPrefix(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "), "token ")
	g.mu.Lock()
	id, ok := g.tokens[raw]
	g.mu.Unlock()
	switch {
	case ok:
		return id, true
	case raw == PersonalToken:
		g.message(w, http.StatusForbidden, "Resource not accessible by personal access token", doc)
	default:
		g.message(w, http.StatusUnauthorized, "Bad credentials", doc)
	}
	return 0, false
}

func (g *GitHub) installationRepos(w http.ResponseWriter, r *http.Request) {
	if _, ok := g.installation(w, r, "apps/installations#list-repositories-accessible-to-the-app-installation"); !ok {
		return
	}
	g.json(w, http.StatusOK, map[string]any{"total_count": 0, "repositories": []any{}})
}

// repo admits a request to /repos/{owner}/{repo}/... from an installation
// on that owner; another installation's token gets GitHub's 404.
func (g *GitHub) repo(h func(w http.ResponseWriter, r *http.Request, installation int64)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id, ok := g.installation(w, r, "checks/runs")
		if !ok {
			return
		}
		g.mu.Lock()
		owner := g.owners[id]
		g.mu.Unlock()
		if !strings.EqualFold(owner, r.PathValue("owner")) {
			g.message(w, http.StatusNotFound, "Not Found", "repos")
			return
		}
		h(w, r, id)
	}
}

func (g *GitHub) repoFull(r *http.Request) string {
	return r.PathValue("owner") + "/" + r.PathValue("repo")
}

func repoJSON(full string) map[string]any {
	owner, name, _ := strings.Cut(full, "/")
	return map[string]any{"id": len(full) * 1000, "name": name, "full_name": full, "owner": map[string]any{"login": owner}, "private": false}
}

func (g *GitHub) getRun(w http.ResponseWriter, r *http.Request, _ int64) {
	g.mu.Lock()
	run, ok := g.runs[g.repoFull(r)+"#"+r.PathValue("id")]
	g.mu.Unlock()
	if !ok {
		g.message(w, http.StatusNotFound, "Not Found", "actions/workflow-runs#get-a-workflow-run")
		return
	}
	prs := []any{}
	for _, n := range run.PRs {
		prs = append(prs, map[string]any{"id": n * 7, "number": n, "url": fmt.Sprintf("%srepos/%s/pulls/%d", g.URL, g.repoFull(r), n),
			"head": map[string]any{"ref": "feature", "sha": run.HeadSHA, "repo": map[string]any{"id": 1, "name": "x"}},
			"base": map[string]any{"ref": "main", "sha": strings.Repeat("0", 40), "repo": map[string]any{"id": 1, "name": "x"}}})
	}
	g.json(w, http.StatusOK, map[string]any{
		"id": run.ID, "name": "perf", "node_id": "WFR_1", "head_branch": "feature", "head_sha": run.HeadSHA,
		"path": ".github/workflows/perf.yml", "run_number": 12, "run_attempt": run.RunAttempt, "event": run.Event,
		"status": "completed", "conclusion": "success", "workflow_id": 9, "pull_requests": prs,
		"repository": repoJSON(g.repoFull(r)), "head_repository": repoJSON(run.HeadRepository),
		"created_at": "2026-12-01T10:00:00Z", "updated_at": "2026-12-01T10:20:00Z",
	})
}

func (g *GitHub) getPR(w http.ResponseWriter, r *http.Request, _ int64) {
	g.mu.Lock()
	pr, ok := g.prs[g.repoFull(r)+"#"+r.PathValue("n")]
	g.mu.Unlock()
	if !ok {
		g.message(w, http.StatusNotFound, "Not Found", "pulls/pulls#get-a-pull-request")
		return
	}
	g.json(w, http.StatusOK, prJSON(g.repoFull(r), pr))
}

func prJSON(base string, pr PR) map[string]any {
	ref := pr.HeadRef
	if ref == "" {
		ref = "feature"
	}
	owner, _, _ := strings.Cut(pr.HeadRepo, "/")
	return map[string]any{
		"id": pr.Number * 7, "number": pr.Number, "state": "open", "title": "a change",
		"head": map[string]any{"ref": ref, "sha": pr.HeadSHA, "repo": repoJSON(pr.HeadRepo), "label": owner + ":" + ref},
		"base": map[string]any{"ref": "main", "sha": strings.Repeat("0", 40), "repo": repoJSON(base)},
	}
}

// listPRs is GET /repos/{o}/{r}/pulls, filtered by head=owner:branch as
// GitHub filters it.
func (g *GitHub) listPRs(w http.ResponseWriter, r *http.Request, _ int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	head := r.URL.Query().Get("head")
	out := []any{}
	for key, pr := range g.prs {
		if !strings.HasPrefix(key, g.repoFull(r)+"#") {
			continue
		}
		m := prJSON(g.repoFull(r), pr)
		if head != "" && !strings.EqualFold(m["head"].(map[string]any)["label"].(string), head) {
			continue
		}
		out = append(out, m)
	}
	g.json(w, http.StatusOK, out)
}

func (g *GitHub) checkJSON(c *CheckRun) map[string]any {
	m := map[string]any{
		"id": c.ID, "name": c.Name, "head_sha": c.HeadSHA, "status": c.Status, "conclusion": nil,
		"app":    map[string]any{"id": c.AppID, "slug": "perfgate-test"},
		"output": map[string]any{"title": c.Title, "summary": "", "annotations_count": 0},
	}
	if c.Conclusion != "" {
		m["conclusion"] = c.Conclusion
	}
	return m
}

func (g *GitHub) listChecks(w http.ResponseWriter, r *http.Request, _ int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	name := r.URL.Query().Get("check_name")
	out := []any{}
	for i := len(g.checks) - 1; i >= 0; i-- {
		c := g.checks[i]
		if c.HeadSHA == r.PathValue("ref") && (name == "" || c.Name == name) {
			out = append(out, g.checkJSON(c))
		}
	}
	g.json(w, http.StatusOK, map[string]any{"total_count": len(out), "check_runs": out})
}

type checkBody struct {
	Name       *string `json:"name"`
	HeadSHA    *string `json:"head_sha"`
	Status     *string `json:"status"`
	Conclusion *string `json:"conclusion"`
	Output     *struct {
		Title *string `json:"title"`
	} `json:"output"`
}

func (c *CheckRun) apply(b checkBody) {
	if b.Name != nil {
		c.Name = *b.Name
	}
	if b.Status != nil {
		c.Status = *b.Status
	}
	if b.Conclusion != nil {
		c.Conclusion, c.Status = *b.Conclusion, "completed"
	}
	if b.Output != nil && b.Output.Title != nil {
		c.Title = *b.Output.Title
	}
}

func (g *GitHub) createCheck(w http.ResponseWriter, r *http.Request, _ int64) {
	var b checkBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil || b.Name == nil || b.HeadSHA == nil {
		g.message(w, http.StatusUnprocessableEntity, "Invalid request.", "checks/runs#create-a-check-run")
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	c := &CheckRun{ID: g.id(), AppID: AppID, HeadSHA: *b.HeadSHA, Status: "queued"}
	c.apply(b)
	g.checks = append(g.checks, c)
	g.json(w, http.StatusCreated, g.checkJSON(c))
}

func (g *GitHub) updateCheck(w http.ResponseWriter, r *http.Request, _ int64) {
	var b checkBody
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		g.message(w, http.StatusUnprocessableEntity, "Invalid request.", "checks/runs#update-a-check-run")
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.checks {
		if c.ID == id {
			c.apply(b)
			g.json(w, http.StatusOK, g.checkJSON(c))
			return
		}
	}
	g.message(w, http.StatusNotFound, "Not Found", "checks/runs#update-a-check-run")
}
