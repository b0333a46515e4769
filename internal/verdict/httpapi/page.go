package httpapi

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/verdict"
)

//go:embed templates/*.html
var templateFiles embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"short": event.ShortSHA,
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04Z") },
	"pct":   func(f float64) string { return fmt.Sprintf("%.0f %%", 100*f) },
}).ParseFS(templateFiles, "templates/*.html"))

type chart struct {
	Metric string
	SVG    template.HTML
}

type repoPage struct {
	Title, Repo string
	Latest      []verdict.Run
	Charts      []chart
	Models      []verdict.ModelStat
	Window, Min int
	Share       float64
}

type indexRow struct {
	Name   string
	Latest *verdict.Run
}

type indexPage struct {
	Title string
	Repos []indexRow
}

func (s *server) render(w http.ResponseWriter, r *http.Request, name string, data any) {
	var b bytes.Buffer
	if err := pages.ExecuteTemplate(&b, name, data); err != nil {
		s.writeServiceError(w, r, fmt.Errorf("rendering %s: %w", name, err))
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'")
	_, _ = w.Write(b.Bytes())
}

func (s *server) repoPage(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	repo := r.PathValue("owner") + "/" + r.PathValue("repo")
	if !s.canRead(w, r, repo) {
		return
	}
	v, err := s.svc.Repository(r.Context(), repo)
	if errors.Is(err, verdict.ErrNotFound) {
		writeError(w, http.StatusNotFound, "no attempt of %s was posted", repo)
		return
	}
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	p := repoPage{Title: repo, Repo: repo, Latest: v.Latest, Models: v.Models,
		Window: v.Learn.Window, Min: v.Learn.MinAttempts, Share: v.Learn.Share}
	for _, t := range v.Trends {
		p.Charts = append(p.Charts, chart{Metric: t.Metric, SVG: trendSVG(t)})
	}
	s.render(w, r, "repo.html", p)
}

func (s *server) indexPage(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, http.MethodGet) {
		return
	}
	repos, err := s.svc.Repositories(r.Context())
	if err != nil {
		s.writeServiceError(w, r, err)
		return
	}
	if !s.auth.ReadsPublic {
		// With reads gated the index shows only the caller's repository.
		who, err := s.auth.authorize(r, "")
		if err != nil {
			s.refuse(w, r, err)
			return
		}
		repos = []string{who.repo}
	}
	p := indexPage{Title: "repositories"}
	for _, name := range repos {
		row := indexRow{Name: name}
		if v, err := s.svc.Repository(r.Context(), name); err == nil && len(v.Latest) > 0 {
			row.Latest = &v.Latest[0]
		}
		p.Repos = append(p.Repos, row)
	}
	s.render(w, r, "index.html", p)
}
