package httpapi

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/perfgate/perfgate/internal/verdict"
)

func (s *server) postAttempt(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodPost) {
		return
	}
	// Who is asking is checked before the body is parsed, so strangers
	// cannot make the service read 4 MiB; what they may write is checked
	// against the body's repository below.
	who, err := s.auth.authorize(r, "")
	if err != nil {
		s.refuse(w, r, err)
		return
	}
	var sub verdict.Submission
	if !decodeStrict(w, r, s.maxBody, &sub) {
		return
	}
	// A client that sends the default gate's name gets the default plan's
	// judgment, check and comment, as one that sends no name does.
	sub.Facts.Plan = verdict.PlanOf(sub.Facts.Plan)
	if err := mayActFor(who.repo, sub.Facts.Repository); err != nil {
		s.refuse(w, r, err)
		return
	}
	if err := s.auth.bind(r.Context(), who, sub.Facts); err != nil {
		s.refuse(w, r, err)
		return
	}
	rc, err := s.svc.Ingest(r.Context(), sub)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	status := http.StatusOK
	if rc.Created {
		status = http.StatusCreated
	}
	rc.Attempt.Report = nil // the client sent it; the answer stays small
	writeJSON(w, status, rc)
}

// params reads a GET's query, refusing parameters the route does not
// take (400 naming it) and repeated ones.
func params(w http.ResponseWriter, r *http.Request, known ...string) (url.Values, bool) {
	q := r.URL.Query()
	for k, vs := range q {
		ok := false
		for _, n := range known {
			ok = ok || k == n
		}
		if !ok {
			writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("unknown parameter %q: %s takes %v", k, r.URL.Path, known), Field: k})
			return nil, false
		}
		if len(vs) > 1 {
			writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("parameter %q given %d times: give it once", k, len(vs)), Field: k})
			return nil, false
		}
	}
	if q.Get("repo") == "" {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "parameter \"repo\" is missing: give ?repo=OWNER/NAME", Field: "repo"})
		return nil, false
	}
	return q, true
}

func intParam(w http.ResponseWriter, q url.Values, name string) (int64, bool) {
	v, err := strconv.ParseInt(q.Get(name), 10, 64)
	if err != nil || v <= 0 {
		writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("parameter %q is %q: give a positive whole number", name, q.Get(name)), Field: name})
		return 0, false
	}
	return v, true
}

// decisionAnswer is GET /v1/decision's body.
type decisionAnswer struct {
	verdict.RunKey
	Attempt int `json:"attempt"`
	verdict.Decision
}

func (s *server) getDecision(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	q, ok := params(w, r, "repo", "run_id", "run_attempt", "plan", "attempt")
	if !ok {
		return
	}
	run, ok := intParam(w, q, "run_id")
	if !ok {
		return
	}
	// A client from before run attempts were keyed sends none: its
	// attempts are the first run attempt's.
	runAttempt := int64(1)
	if q.Has("run_attempt") {
		if runAttempt, ok = intParam(w, q, "run_attempt"); !ok {
			return
		}
	}
	n, ok := intParam(w, q, "attempt")
	if !ok || !s.canRead(w, r, q.Get("repo")) {
		return
	}
	k := verdict.RunKey{Repository: q.Get("repo"), RunID: run, RunAttempt: int(runAttempt), Plan: verdict.PlanOf(q.Get("plan"))}
	d, err := s.svc.Decision(r.Context(), k, int(n))
	if err != nil {
		s.writeServiceError(w, r, fmt.Errorf("attempt %d of %s: %w (POST /v1/attempts first)", n, k, err))
		return
	}
	writeJSON(w, http.StatusOK, decisionAnswer{RunKey: k, Attempt: int(n), Decision: d})
}

func (s *server) getVerdicts(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	q, ok := params(w, r, "repo", "sha", "pr", "merge_group", "tag")
	if !ok {
		return
	}
	query := verdict.Query{Repository: q.Get("repo"), SHA: q.Get("sha"), MergeGroupSHA: q.Get("merge_group"), Tag: q.Get("tag")}
	given, selector := 0, ""
	for _, k := range []string{"sha", "pr", "merge_group", "tag"} {
		if q.Has(k) {
			given, selector = given+1, k
		}
	}
	if given != 1 {
		writeError(w, http.StatusBadRequest, "give exactly one of sha, pr, merge_group or tag (%d given)", given)
		return
	}
	// An empty selector (?sha= from an unset variable) selects nothing the
	// store can look up: the caller's mistake, not the service's.
	if q.Get(selector) == "" {
		writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("parameter %q is empty: give its value, for example ?%s=%s", selector, selector, map[string]string{"sha": "<40-digit SHA>", "pr": "42", "merge_group": "<40-digit SHA>", "tag": "v1.2.3"}[selector]), Field: selector})
		return
	}
	if q.Has("pr") {
		pr, ok := intParam(w, q, "pr")
		if !ok {
			return
		}
		query.PR = int(pr)
	}
	if !s.canRead(w, r, query.Repository) {
		return
	}
	runs, err := s.svc.Verdicts(r.Context(), query)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	if runs == nil {
		runs = []verdict.Run{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"verdicts": runs})
}

func (s *server) getReleaseLine(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	q, ok := params(w, r, "repo", "tag", "plan")
	if !ok {
		return
	}
	if q.Get("tag") == "" {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "parameter \"tag\" is missing: give ?tag=v1.2.3", Field: "tag"})
		return
	}
	if !s.canRead(w, r, q.Get("repo")) {
		return
	}
	plan := verdict.PlanOf(q.Get("plan"))
	line, err := s.svc.ReleaseLine(r.Context(), q.Get("repo"), q.Get("tag"), plan)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	answer := map[string]string{"repository": q.Get("repo"), "tag": q.Get("tag"), "line": line}
	if plan != "" {
		answer["plan"] = plan
	}
	writeJSON(w, http.StatusOK, answer)
}
