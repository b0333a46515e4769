package publish

import (
	"context"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// fakeToken is the token the fake GitHub accepts from a token client;
// like GITHUB_TOKEN it acts as the GitHub Actions App.
const (
	fakeToken    = "ghs_faketokenforpublishtests0123456789"
	actionsAppID = 15368
)

// callerApp keys the App a request acts as in its context.
type callerApp struct{}

func caller(r *http.Request) int64 { id, _ := r.Context().Value(callerApp{}).(int64); return id }

// fakeGitHub is an httptest GitHub in go-github's own test style: a mux
// under /api-v3/, answering in GitHub's JSON shapes (built from the
// fixtures under testdata/) and enforcing GitHub's documented rules that
// perfgate must respect: 50 annotations a request, 65,535 characters of
// summary, a non-empty name on every update, a conclusion on completion.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu       sync.Mutex
	tokens   map[string]int64 // accepted tokens, and the App each acts as
	nextID   int64
	runs     []*fakeRun
	comments map[int][]*fakeComment
	releases []*fakeRelease
	calls    []fakeCall
	failures []fakeFailure
	// workflowRuns are GitHub's records of runs (fake_runs_test.go).
	workflowRuns map[int64]fakeWorkflowRun

	// A GitHub App: the public half of its key, its ID and installation.
	appKey         *rsa.PublicKey
	appID          int64
	installationID int64
	tokenRequests  int
}

type fakeCall struct {
	Method, Path string
	Query        url.Values
	Body         []byte
}

type fakeRun struct {
	AppID                                         int64 // the App that created it; only that App may update it
	ID                                            int64
	Name, HeadSHA, Status, Conclusion, DetailsURL string
	Title, Summary                                string
	Annotations                                   []fakeAnnotation
	StartedAt, CompletedAt                        string
}

type fakeAnnotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	AnnotationLevel string `json:"annotation_level"`
	Message         string `json:"message"`
	Title           string `json:"title,omitempty"`
}

type fakeComment struct {
	ID    int64
	Body  string
	Login string
}

type fakeRelease struct {
	ID    int64
	Tag   string
	Body  string
	Draft bool
}

// fakeFailure answers the next request whose method and path match with
// an error instead.
type fakeFailure struct {
	Method, PathSuffix string
	Skip               int // matching requests let through first
	Status             int
	Header             map[string]string
	Fixture            string
}

func newFakeGitHub(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{t: t, tokens: map[string]int64{fakeToken: actionsAppID}, nextID: 1000, comments: map[int][]*fakeComment{}}
	api := http.NewServeMux()
	api.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref}/check-runs", f.listCheckRuns)
	api.HandleFunc("POST /repos/{owner}/{repo}/check-runs", f.createCheckRun)
	api.HandleFunc("PATCH /repos/{owner}/{repo}/check-runs/{id}", f.updateCheckRun)
	api.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", f.listComments)
	api.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", f.createComment)
	api.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", f.editComment)
	api.HandleFunc("GET /repos/{owner}/{repo}/releases/tags/{tag}", f.releaseByTag)
	api.HandleFunc("GET /repos/{owner}/{repo}/releases", f.listReleases)
	api.HandleFunc("PATCH /repos/{owner}/{repo}/releases/{id}", f.editRelease)
	api.HandleFunc("POST /app/installations/{id}/access_tokens", f.accessToken)
	f.runRoutes(api)

	mux := http.NewServeMux()
	mux.Handle("/api-v3/", http.StripPrefix("/api-v3", f.middleware(api)))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("fake GitHub: request outside /api-v3/: %s %s", r.Method, r.URL)
		http.Error(w, "outside the API prefix", http.StatusBadRequest)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// client is a token client pointed at the fake, as go-github's tests set
// client.BaseURL = server.URL + "/api-v3/".
func (f *fakeGitHub) client() *Client {
	f.t.Helper()
	c, err := New(Credentials{Token: fakeToken}, f.apiURL())
	if err != nil {
		f.t.Fatalf("New: %v", err)
	}
	return c
}

func (f *fakeGitHub) apiURL() string { return f.srv.URL + "/api-v3/" }

// middleware records each call, checks the credentials and serves an
// injected failure first.
func (f *fakeGitHub) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		f.mu.Lock()
		f.calls = append(f.calls, fakeCall{Method: r.Method, Path: r.URL.Path, Query: r.URL.Query(), Body: body})
		var fail *fakeFailure
		for i, ff := range f.failures {
			if ff.Method == r.Method && strings.HasSuffix(r.URL.Path, ff.PathSuffix) {
				if ff.Skip > 0 {
					f.failures[i].Skip--
					break
				}
				fail = &ff
				f.failures = slices.Delete(f.failures, i, i+1)
				break
			}
		}
		tokens := maps.Clone(f.tokens)
		f.mu.Unlock()
		if fail != nil {
			for k, v := range fail.Header {
				w.Header().Set(k, v)
			}
			f.writeFixture(w, fail.Status, fail.Fixture)
			return
		}
		if !strings.HasSuffix(r.URL.Path, "/access_tokens") {
			auth := r.Header.Get("Authorization")
			app, ok := int64(0), false
			for tok, id := range tokens {
				if auth == "Bearer "+tok || auth == "token "+tok {
					app, ok = id, true
				}
			}
			if !ok {
				f.writeFixture(w, http.StatusUnauthorized, "error_bad_credentials.json")
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), callerApp{}, app))
		}
		next.ServeHTTP(w, r)
	})
}

// fail makes the next matching request fail with status and the fixture.
func (f *fakeGitHub) fail(ff fakeFailure) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failures = append(f.failures, ff)
}

// callsTo returns the calls with method ("" for any) whose path ends in
// suffix.
func (f *fakeGitHub) callsTo(method, suffix string) []fakeCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeCall
	for _, c := range f.calls {
		if (method == "" || c.Method == method) && strings.HasSuffix(c.Path, suffix) {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeGitHub) id() int64 { f.nextID++; return f.nextID }

func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("reading fixture: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return m
}

func (f *fakeGitHub) writeFixture(w http.ResponseWriter, status int, name string) {
	f.writeJSON(w, status, fixture(f.t, name))
}

func (f *fakeGitHub) writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		f.t.Errorf("fake GitHub: writing answer: %v", err)
	}
}

// unprocessable answers as GitHub does to a request that breaks a rule.
func (f *fakeGitHub) unprocessable(w http.ResponseWriter, why string) {
	f.t.Logf("fake GitHub: 422 %s", why)
	m := fixture(f.t, "error_validation.json")
	m["message"] = "Validation Failed: " + why
	f.writeJSON(w, http.StatusUnprocessableEntity, m)
}

// page applies GitHub's paging (per_page default 30, at most 100) and
// writes the Link header go-github reads resp.NextPage from.
func page[T any](w http.ResponseWriter, r *http.Request, all []T) []T {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	n = max(n, 1)
	last := max((len(all)+per-1)/per, 1)
	link := func(p int, rel string) string {
		return fmt.Sprintf("<http://%s/api-v3%s?page=%d&per_page=%d>; rel=%q", r.Host, r.URL.Path, p, per, rel)
	}
	var links []string
	if n < last {
		links = append(links, link(n+1, "next"), link(last, "last"))
	}
	if n > 1 {
		links = append(links, link(1, "first"), link(n-1, "prev"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	lo := min((n-1)*per, len(all))
	return all[lo:min(lo+per, len(all))]
}

// --- check runs

type fakeRunRequest struct {
	Name        *string `json:"name"`
	HeadSHA     *string `json:"head_sha"`
	DetailsURL  *string `json:"details_url"`
	ExternalID  *string `json:"external_id"`
	Status      *string `json:"status"`
	Conclusion  *string `json:"conclusion"`
	StartedAt   *string `json:"started_at"`
	CompletedAt *string `json:"completed_at"`
	Output      *struct {
		Title       *string          `json:"title"`
		Summary     *string          `json:"summary"`
		Text        *string          `json:"text"`
		Annotations []fakeAnnotation `json:"annotations"`
	} `json:"output"`
}

func (f *fakeGitHub) decodeRun(w http.ResponseWriter, r *http.Request) (*fakeRunRequest, bool) {
	var req fakeRunRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		f.unprocessable(w, "body: "+err.Error())
		return nil, false
	}
	if req.Name != nil && *req.Name == "" {
		f.unprocessable(w, "name can't be blank")
		return nil, false
	}
	if req.Status != nil && !slices.Contains([]string{"queued", "in_progress", "completed"}, *req.Status) {
		f.unprocessable(w, "status is not included in the list")
		return nil, false
	}
	if req.Conclusion != nil && !slices.Contains([]string{"success", "failure", "neutral", "cancelled", "skipped", "timed_out", "action_required"}, *req.Conclusion) {
		f.unprocessable(w, "conclusion is not included in the list")
		return nil, false
	}
	if req.Status != nil && *req.Status == "completed" && req.Conclusion == nil {
		f.unprocessable(w, "conclusion can't be blank when status is completed")
		return nil, false
	}
	if o := req.Output; o != nil {
		switch {
		case o.Title == nil || *o.Title == "":
			f.unprocessable(w, "output.title can't be blank")
			return nil, false
		case o.Summary == nil || *o.Summary == "":
			f.unprocessable(w, "output.summary can't be blank")
			return nil, false
		case utf8.RuneCountInString(*o.Summary) > 65535:
			f.unprocessable(w, "output.summary is too long (maximum is 65535 characters)")
			return nil, false
		case len(o.Annotations) > 50:
			f.unprocessable(w, "output.annotations: only 50 annotations may be sent per request")
			return nil, false
		}
		for _, a := range o.Annotations {
			if a.Path == "" || a.StartLine < 1 || a.EndLine < a.StartLine || a.Message == "" ||
				!slices.Contains([]string{"notice", "warning", "failure"}, a.AnnotationLevel) {
				f.unprocessable(w, fmt.Sprintf("annotation %+v is incomplete", a))
				return nil, false
			}
		}
	}
	return &req, true
}

func (f *fakeGitHub) applyRun(run *fakeRun, req *fakeRunRequest) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&run.Name, req.Name)
	set(&run.Status, req.Status)
	set(&run.Conclusion, req.Conclusion)
	set(&run.DetailsURL, req.DetailsURL)
	set(&run.StartedAt, req.StartedAt)
	set(&run.CompletedAt, req.CompletedAt)
	if req.Output != nil {
		set(&run.Title, req.Output.Title)
		set(&run.Summary, req.Output.Summary)
		// GitHub appends the annotations of each update to those the run has.
		run.Annotations = append(run.Annotations, req.Output.Annotations...)
	}
}

func (f *fakeGitHub) renderRun(r *http.Request, run *fakeRun) map[string]any {
	m := fixture(f.t, "check_run.json")
	base := fmt.Sprintf("http://%s/api-v3/repos/%s/%s/check-runs/%d", r.Host, r.PathValue("owner"), r.PathValue("repo"), run.ID)
	m["id"] = run.ID
	m["app"].(map[string]any)["id"] = run.AppID
	m["name"] = run.Name
	m["head_sha"] = run.HeadSHA
	m["url"] = base
	m["status"] = run.Status
	m["conclusion"] = nil
	if run.Conclusion != "" {
		m["conclusion"] = run.Conclusion
	}
	m["details_url"] = run.DetailsURL
	m["started_at"] = run.StartedAt
	m["completed_at"] = nil
	if run.CompletedAt != "" {
		m["completed_at"] = run.CompletedAt
	}
	m["output"] = map[string]any{
		"title": run.Title, "summary": run.Summary, "text": nil,
		"annotations_count": len(run.Annotations), "annotations_url": base + "/annotations",
	}
	return m
}

func (f *fakeGitHub) listCheckRuns(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	name, filter, appID := r.URL.Query().Get("check_name"), r.URL.Query().Get("filter"), r.URL.Query().Get("app_id")
	var found []*fakeRun
	for i := len(f.runs) - 1; i >= 0; i-- { // newest first, as GitHub lists them
		run := f.runs[i]
		if run.HeadSHA != r.PathValue("ref") || (name != "" && run.Name != name) || (appID != "" && strconv.FormatInt(run.AppID, 10) != appID) {
			continue
		}
		if filter != "all" && slices.ContainsFunc(found, func(o *fakeRun) bool { return o.Name == run.Name }) {
			continue // "latest" (the default) keeps the newest run of a name
		}
		found = append(found, run)
	}
	runs := []map[string]any{}
	for _, run := range page(w, r, found) {
		runs = append(runs, f.renderRun(r, run))
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"total_count": len(found), "check_runs": runs})
}

func (f *fakeGitHub) createCheckRun(w http.ResponseWriter, r *http.Request) {
	req, ok := f.decodeRun(w, r)
	if !ok {
		return
	}
	if req.Name == nil || req.HeadSHA == nil || !isSHA(*req.HeadSHA) {
		f.unprocessable(w, "name and head_sha are required")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	run := &fakeRun{AppID: caller(r), ID: f.id(), HeadSHA: *req.HeadSHA, Status: "queued", StartedAt: time.Now().UTC().Format(time.RFC3339)}
	f.applyRun(run, req)
	f.runs = append(f.runs, run)
	f.writeJSON(w, http.StatusCreated, f.renderRun(r, run))
}

func (f *fakeGitHub) updateCheckRun(w http.ResponseWriter, r *http.Request) {
	req, ok := f.decodeRun(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, run := range f.runs {
		if run.ID == id {
			if run.AppID != caller(r) {
				f.writeFixture(w, http.StatusForbidden, "error_resource_not_accessible.json")
				return
			}
			f.applyRun(run, req)
			f.writeJSON(w, http.StatusOK, f.renderRun(r, run))
			return
		}
	}
	f.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/checks/runs#update-a-check-run"})
}

// runsOn returns the runs on sha, oldest first.
func (f *fakeGitHub) runsOn(sha string) []fakeRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeRun
	for _, r := range f.runs {
		if r.HeadSHA == sha {
			out = append(out, *r)
		}
	}
	return out
}

// --- comments

func (f *fakeGitHub) renderComment(r *http.Request, c *fakeComment) map[string]any {
	m := fixture(f.t, "issue_comment.json")
	m["id"] = c.ID
	m["body"] = c.Body
	m["url"] = fmt.Sprintf("http://%s/api-v3/repos/%s/%s/issues/comments/%d", r.Host, r.PathValue("owner"), r.PathValue("repo"), c.ID)
	m["user"].(map[string]any)["login"] = c.Login
	return m
}

func (f *fakeGitHub) listComments(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("number"))
	out := []map[string]any{}
	for _, c := range page(w, r, f.comments[n]) {
		out = append(out, f.renderComment(r, c))
	}
	f.writeJSON(w, http.StatusOK, out)
}

func (f *fakeGitHub) decodeComment(w http.ResponseWriter, r *http.Request) (string, bool) {
	var req struct {
		Body *string `json:"body"`
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Body == nil || *req.Body == "" {
		f.unprocessable(w, fmt.Sprintf("body can't be blank (%v)", err))
		return "", false
	}
	if utf8.RuneCountInString(*req.Body) > 65536 {
		f.unprocessable(w, "body is too long (maximum is 65536 characters)")
		return "", false
	}
	return *req.Body, true
}

func (f *fakeGitHub) createComment(w http.ResponseWriter, r *http.Request) {
	body, ok := f.decodeComment(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	n, _ := strconv.Atoi(r.PathValue("number"))
	c := &fakeComment{ID: f.id(), Body: body, Login: "github-actions[bot]"}
	f.comments[n] = append(f.comments[n], c)
	f.writeJSON(w, http.StatusCreated, f.renderComment(r, c))
}

func (f *fakeGitHub) editComment(w http.ResponseWriter, r *http.Request) {
	body, ok := f.decodeComment(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, cs := range f.comments {
		for _, c := range cs {
			if c.ID == id {
				c.Body = body
				f.writeJSON(w, http.StatusOK, f.renderComment(r, c))
				return
			}
		}
	}
	f.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}

// addComments seeds the pull request with comments from other people.
func (f *fakeGitHub) addComment(pr int, login, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &fakeComment{ID: f.id(), Body: body, Login: login}
	f.comments[pr] = append(f.comments[pr], c)
	return c.ID
}

func (f *fakeGitHub) commentsOn(pr int) []fakeComment {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeComment
	for _, c := range f.comments[pr] {
		out = append(out, *c)
	}
	return out
}

// --- releases

func (f *fakeGitHub) renderRelease(r *http.Request, rel *fakeRelease) map[string]any {
	m := fixture(f.t, "release.json")
	m["id"] = rel.ID
	m["tag_name"] = rel.Tag
	m["name"] = rel.Tag
	m["body"] = rel.Body
	m["draft"] = rel.Draft
	if rel.Draft {
		m["published_at"] = nil
	}
	return m
}

func (f *fakeGitHub) releaseByTag(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rel := range f.releases {
		if rel.Tag == r.PathValue("tag") && !rel.Draft { // GitHub does not find drafts by tag
			f.writeJSON(w, http.StatusOK, f.renderRelease(r, rel))
			return
		}
	}
	f.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest/releases/releases#get-a-release-by-tag-name"})
}

func (f *fakeGitHub) listReleases(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for _, rel := range page(w, r, f.releases) {
		out = append(out, f.renderRelease(r, rel))
	}
	f.writeJSON(w, http.StatusOK, out)
}

func (f *fakeGitHub) editRelease(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		f.unprocessable(w, err.Error())
		return
	}
	for k := range req {
		if k != "body" {
			f.unprocessable(w, "perfgate must change only the body, it sent "+k)
			return
		}
	}
	body, _ := req["body"].(string)
	f.mu.Lock()
	defer f.mu.Unlock()
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	for _, rel := range f.releases {
		if rel.ID == id {
			rel.Body = body
			f.writeJSON(w, http.StatusOK, f.renderRelease(r, rel))
			return
		}
	}
	f.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
}

func (f *fakeGitHub) addRelease(tag, body string, draft bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases = append(f.releases, &fakeRelease{ID: f.id(), Tag: tag, Body: body, Draft: draft})
}

func (f *fakeGitHub) releaseBody(tag string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, rel := range f.releases {
		if rel.Tag == tag {
			return rel.Body
		}
	}
	f.t.Fatalf("no release %s", tag)
	return ""
}

// --- GitHub App installation tokens

// accessToken checks the App's JWT as GitHub does (RS256 with the App's
// key, issuer the App's ID, issued in the past, at most ten minutes of
// life) and hands out an installation token valid for an hour.
func (f *fakeGitHub) accessToken(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenRequests++
	deny := func(why string) {
		f.t.Logf("fake GitHub: access token refused: %s", why)
		f.writeFixture(w, http.StatusUnauthorized, "error_bad_credentials.json")
	}
	raw, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || f.appKey == nil {
		deny("no App JWT")
		return
	}
	tok, err := jwt.ParseSigned(raw, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil {
		deny(err.Error())
		return
	}
	var claims jwt.Claims
	if err := tok.Claims(f.appKey, &claims); err != nil {
		deny(err.Error())
		return
	}
	if err := claims.ValidateWithLeeway(jwt.Expected{Issuer: strconv.FormatInt(f.appID, 10), Time: time.Now()}, 0); err != nil {
		deny(err.Error())
		return
	}
	if claims.IssuedAt == nil || claims.Expiry == nil || claims.Expiry.Time().Sub(claims.IssuedAt.Time()) > 10*time.Minute {
		deny("the JWT must carry iat and exp at most ten minutes apart")
		return
	}
	if r.PathValue("id") != strconv.FormatInt(f.installationID, 10) {
		f.writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found"})
		return
	}
	m := fixture(f.t, "installation_token.json")
	m["expires_at"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	f.tokens[m["token"].(string)] = f.appID
	f.writeJSON(w, http.StatusCreated, m)
}
