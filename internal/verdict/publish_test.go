package verdict_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
	"github.com/perfgate/perfgate/internal/verdict/publish"
)

// github is the little of GitHub's REST API the service's publishing
// reaches, in its JSON shapes, under the /api-v3/ prefix go-github's own
// tests use: check runs by commit, created and updated, and a pull
// request's comments, listed, created and edited.
type github struct {
	mu       sync.Mutex
	checks   []map[string]any
	comments []map[string]any
	created  map[string]int // POSTs by kind
}

func newGitHub(t *testing.T) (*github, string) {
	t.Helper()
	g := &github{created: map[string]int{}}
	mux := http.NewServeMux()
	read := func(r *http.Request) map[string]any {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Errorf("%s %s: %v", r.Method, r.URL.Path, err)
		}
		return m
	}
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("GET /api-v3/repos/acme/api/commits/{sha}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		var runs []map[string]any
		for _, c := range g.checks {
			if c["head_sha"] == r.PathValue("sha") && (r.URL.Query().Get("check_name") == "" || r.URL.Query().Get("check_name") == c["name"]) {
				runs = append(runs, c)
			}
		}
		reply(w, 200, map[string]any{"total_count": len(runs), "check_runs": runs})
	})
	// create and update serve a POST that adds an object to a list and
	// a PATCH that changes one by its id, for check runs and comments.
	create := func(kind string, list *[]map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			m := read(r)
			g.mu.Lock()
			defer g.mu.Unlock()
			m["id"] = len(*list) + 1
			*list = append(*list, m)
			g.created[kind]++
			reply(w, 201, m)
		}
	}
	update := func(list *[]map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			m := read(r)
			id, _ := strconv.Atoi(r.PathValue("id"))
			g.mu.Lock()
			defer g.mu.Unlock()
			if id < 1 || id > len(*list) {
				reply(w, 404, map[string]any{"message": "Not Found"})
				return
			}
			for k, v := range m {
				(*list)[id-1][k] = v
			}
			reply(w, 200, (*list)[id-1])
		}
	}
	mux.HandleFunc("POST /api-v3/repos/acme/api/check-runs", create("check", &g.checks))
	mux.HandleFunc("PATCH /api-v3/repos/acme/api/check-runs/{id}", update(&g.checks))
	mux.HandleFunc("GET /api-v3/repos/acme/api/issues/42/comments", func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		defer g.mu.Unlock()
		reply(w, 200, g.comments)
	})
	mux.HandleFunc("POST /api-v3/repos/acme/api/issues/42/comments", create("comment", &g.comments))
	mux.HandleFunc("PATCH /api-v3/repos/acme/api/issues/comments/{id}", update(&g.comments))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the publisher called %s %s, which this test's GitHub does not serve", r.Method, r.URL.Path)
		reply(w, 404, map[string]any{"message": "Not Found"})
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return g, srv.URL + "/api-v3/"
}

// TestPublishingThroughGoGitHub runs the service with internal/verdict/publish
// against GitHub's JSON shapes: a retried run makes one check on the head
// SHA, in progress then completed; another run of the pull request on the
// same head updates that one check run (never a second one) and edits the
// one comment.
func TestPublishingThroughGoGitHub(t *testing.T) {
	g, api := newGitHub(t)
	pub, err := publish.New(publish.Credentials{Token: "ghs_test"}, api)
	if err != nil {
		t.Fatal(err)
	}
	svc := verdict.New(dbtest.Open(t, "sqlite"), verdict.Config{Publisher: pub})
	ctx := context.Background()
	ingest := func(s verdict.Submission) verdict.Receipt {
		t.Helper()
		s.Report = fixture(t, *s.Facts.ExitCode)
		rc, err := svc.Ingest(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		return rc
	}
	ingest(pr(1, 1, epyc, 2))
	if len(g.checks) != 1 || g.checks[0]["status"] != "in_progress" || g.checks[0]["head_sha"] != sha(0xabc) || g.checks[0]["name"] != "perfgate" {
		t.Fatalf("after a retried attempt the checks are %v", g.checks)
	}
	if rc := ingest(pr(1, 2, xeon, 1)); !rc.Published {
		t.Fatalf("the final attempt did not publish: %s", rc.PublishError)
	}
	if len(g.checks) != 1 || g.checks[0]["status"] != "completed" || g.checks[0]["conclusion"] != "failure" {
		t.Errorf("after the regression the checks are %v", g.checks)
	}
	if len(g.comments) != 1 || !strings.Contains(g.comments[0]["body"].(string), "### Attempts") {
		t.Fatalf("after the regression the comments are %v", g.comments)
	}
	// The same pull request runs again and passes.
	if rc := ingest(pr(2, 1, epyc, 0)); !rc.Published {
		t.Fatalf("the re-run did not publish: %s", rc.PublishError)
	}
	if g.created["check"] != 1 || g.created["comment"] != 1 {
		t.Errorf("created %d checks and %d comments over two runs of one PR, want 1 (updated) and 1 (edited)", g.created["check"], g.created["comment"])
	}
	if len(g.checks) != 1 || g.checks[0]["conclusion"] != "success" || g.checks[0]["name"] != "perfgate" {
		t.Errorf("after the passing re-run the checks are %v", g.checks)
	}
	if !strings.Contains(g.comments[0]["body"].(string), "| 1 | "+epyc+" | pass | final | passed |") {
		t.Errorf("after the passing re-run the comment is %v", g.comments[0]["body"])
	}
}
