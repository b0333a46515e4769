package httpapi

import (
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/verdict"
)

// experimentReport is the part of an experiment report the service reads;
// the rest is kept as it came.
type experimentReport struct {
	Kind    string `json:"kind"`
	Routine struct {
		Knee               *float64 `json:"knee_per_s"`
		KneeLevel          *float64 `json:"knee_level"`
		FirstResource      string   `json:"first_resource"`
		FirstResourceLevel *float64 `json:"first_resource_level"`
		PlateauGrowth      *float64 `json:"plateau_growth_ms_per_min"`
		RecoveryS          *float64 `json:"recovery_s"`
	} `json:"routine"`
	Exit    int    `json:"exit"`
	Verdict string `json:"verdict"`
}

// experimentsLimit bounds what GET /v1/experiments and the page read.
const experimentsLimit = 200

func (s *server) experiments(w http.ResponseWriter, r *http.Request) {
	if s.experimentStore == nil {
		writeError(w, http.StatusNotFound, "this service keeps no experiments (it was started without a store for them)")
		return
	}
	switch r.Method {
	case http.MethodPost:
		s.postExperiment(w, r)
	case http.MethodGet:
		s.getExperiments(w, r)
	default:
		allow(w, r, http.MethodGet, http.MethodPost)
	}
}

func (s *server) postExperiment(w http.ResponseWriter, r *http.Request) {
	// The same credentials as attempts: the job's OIDC token or the
	// repository's token, checked before the body is read.
	who, err := s.auth.authorize(r, "")
	if err != nil {
		s.refuse(w, r, err)
		return
	}
	var p verdict.ExperimentPost
	if !decodeStrict(w, r, s.maxBody, &p) {
		return
	}
	for _, f := range []struct{ name, v, example string }{
		{"repository", p.Repository, `"repository": "owner/name"`},
		{"target", p.Target, `"target": "https://staging.example.com"`},
		{"branch", p.Branch, `"branch": "main"`},
		{"commit", p.Commit, `"commit": "<the 40-digit SHA>"`},
	} {
		if strings.TrimSpace(f.v) == "" {
			writeJSON(w, http.StatusBadRequest, apiError{Error: fmt.Sprintf("%s is missing; write %s", f.name, f.example), Field: f.name})
			return
		}
	}
	if err := mayActFor(who.repo, p.Repository); err != nil {
		s.refuse(w, r, err)
		return
	}
	var rep experimentReport
	if err := json.Unmarshal(p.Report, &rep); err != nil || rep.Kind != "perfgate.experiment" {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "report is not a perfgate experiment report; send the JSON `perfgate experiment --out` writes (kind perfgate.experiment)", Field: "report"})
		return
	}
	rt := rep.Routine
	e := &verdict.Experiment{Repository: p.Repository, Target: p.Target, Branch: p.Branch, DefaultBranch: p.DefaultBranch,
		CommitSHA: p.Commit, Received: time.Now().UTC(), Knee: rt.Knee, KneeLevel: rt.KneeLevel, FirstResource: rt.FirstResource,
		FirstResourceLevel: rt.FirstResourceLevel, PlateauGrowth: rt.PlateauGrowth, RecoveryS: rt.RecoveryS,
		Exit: rep.Exit, Verdict: rep.Verdict, Report: p.Report}
	id, prev, err := s.experimentStore.PutExperiment(r.Context(), e)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, verdict.ExperimentReceipt{ID: id, Previous: prev})
}

func (s *server) getExperiments(w http.ResponseWriter, r *http.Request) {
	q, ok := params(w, r, "repo", "target")
	if !ok {
		return
	}
	repo, target := q.Get("repo"), q.Get("target")
	if target == "" {
		writeJSON(w, http.StatusBadRequest, apiError{Error: "parameter \"target\" is missing: write /v1/experiments?repo=owner/name&target=https://staging.example.com", Field: "target"})
		return
	}
	if !s.canRead(w, r, repo) {
		return
	}
	es, err := s.experimentStore.Experiments(r.Context(), repo, target, experimentsLimit)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	if es == nil {
		es = []verdict.Experiment{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"experiments": es})
}

// experimentsPage is /r/{owner}/{repo}/experiments?target=: the knee over
// commits, a point per experiment (the default branch's filled), and the
// routine numbers in a table.
func (s *server) experimentsPage(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	if s.experimentStore == nil {
		writeError(w, http.StatusNotFound, "this service keeps no experiments")
		return
	}
	repo, target := r.PathValue("owner")+"/"+r.PathValue("repo"), r.URL.Query().Get("target")
	if target == "" {
		writeError(w, http.StatusBadRequest, "write /r/%s/experiments?target=https://staging.example.com", repo)
		return
	}
	if !s.canRead(w, r, repo) {
		return
	}
	es, err := s.experimentStore.Experiments(r.Context(), repo, target, experimentsLimit)
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := experimentsTmpl.Execute(w, struct {
		Repo, Target string
		Chart        template.HTML
		Experiments  []verdict.Experiment
	}{repo, target, kneeSVG(es), es}); err != nil {
		s.log.Error("rendering the experiments page", "err", err)
	}
}

// kneeSVG draws the knee over the experiments, oldest left: a point per
// experiment with a knee, filled for the default branch's. Every value is
// a number or a short SHA this function formats, so the markup is safe.
func kneeSVG(es []verdict.Experiment) template.HTML {
	const w, h, pad = 480.0, 160.0, 16.0
	hi := 0.0
	n := 0
	for _, e := range es {
		if e.Knee != nil {
			hi, n = math.Max(hi, *e.Knee), n+1
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="knee-svg" viewBox="0 0 %.0f %.0f" width="%.0f" height="%.0f" role="img" aria-label="the knee over %d experiments">`, w, h, w, h, n)
	fmt.Fprintf(&b, `<rect width="%.0f" height="%.0f" fill="#f6f8fa"/>`, w, h)
	if n == 0 {
		b.WriteString(`<text x="16" y="80" font-size="12">no experiment found a knee</text></svg>`)
		return template.HTML(b.String())
	}
	hi *= 1.1
	x := func(i int) float64 {
		if len(es) == 1 {
			return w / 2
		}
		return pad + float64(i)*(w-2*pad)/float64(len(es)-1)
	}
	y := func(v float64) float64 { return h - pad - v/hi*(h-2*pad) }
	fmt.Fprintf(&b, `<text x="2" y="12" font-size="9" fill="#57606a">%.0f/s</text>`, hi)
	var pts []string
	for i, e := range es {
		if e.Knee != nil {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(*e.Knee)))
		}
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#0969da" stroke-width="1.5" points="%s"/>`, strings.Join(pts, " "))
	for i, e := range es {
		if e.Knee == nil {
			continue
		}
		fill := "#ffffff"
		if e.DefaultBranch {
			fill = "#0969da"
		}
		fmt.Fprintf(&b, `<circle class="knee" cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="#0969da"><title>%s: %.1f/s</title></circle>`,
			x(i), y(*e.Knee), fill, template.HTMLEscapeString(event.ShortSHA(e.CommitSHA)), *e.Knee)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

func kneeText(f *float64) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprintf("%.1f", *f)
}

var experimentsTmpl = template.Must(template.New("experiments").Funcs(template.FuncMap{"num": kneeText, "short": event.ShortSHA}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Repo}}: experiments on {{.Target}}</title>
<style>body{font-family:system-ui,sans-serif;margin:24px;color:#1f2328}table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:3px 8px;font-size:13px}</style>
</head><body>
<h1>{{.Repo}}: capacity experiments on {{.Target}}</h1>
<h2>The knee over commits</h2>
<p>Filled points are the default branch's; the last of them is what the next experiment is judged against.</p>
{{.Chart}}
<h2>Experiments</h2>
<table><tr><th>received</th><th>branch</th><th>commit</th><th>knee/s</th><th>knee level</th><th>first resource to run out</th><th>plateau growth ms/min</th><th>recovery s</th><th>exit</th><th>verdict</th></tr>
{{range .Experiments}}<tr><td>{{.Received.Format "2006-01-02 15:04"}}</td><td>{{.Branch}}{{if .DefaultBranch}} (default){{end}}</td><td>{{short .CommitSHA}}</td><td>{{num .Knee}}</td><td>{{num .KneeLevel}}</td><td>{{.FirstResource}}</td><td>{{num .PlateauGrowth}}</td><td>{{num .RecoveryS}}</td><td>{{.Exit}}</td><td>{{.Verdict}}</td></tr>
{{end}}</table>
</body></html>
`))
