package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/perfgate/perfgate/internal/verdict"
)

// Options configure the handler.
type Options struct {
	// MaxBody bounds request bodies (413 past it); 0 is DefaultMaxBody.
	MaxBody int64
	Auth    *Auth
	Metrics *Metrics
	Log     *slog.Logger
	// Experiments keeps capacity experiments (/v1/experiments,
	// experiments.go); nil answers 404 there.
	Experiments verdict.ExperimentStore
}

type server struct {
	svc     verdict.Service
	maxBody int64
	auth    *Auth
	metrics *Metrics
	log     *slog.Logger

	experimentStore verdict.ExperimentStore
}

// New is the service's whole HTTP surface.
func New(svc verdict.Service, o Options) http.Handler {
	s := &server{svc: svc, maxBody: o.MaxBody, auth: o.Auth, metrics: o.Metrics, log: o.Log, experimentStore: o.Experiments}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBody
	}
	if s.auth == nil {
		s.auth = &Auth{ReadsPublic: true}
	}
	if s.metrics == nil {
		s.metrics = NewMetrics()
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	route := func(pattern, name string, h http.HandlerFunc) {
		mux.Handle(pattern, s.observe(name, h))
	}
	route("/v1/attempts", "attempts", s.postAttempt)
	route("/v1/decision", "decision", s.getDecision)
	route("/v1/verdicts", "verdicts", s.getVerdicts)
	route("/v1/release-line", "release-line", s.getReleaseLine)
	route("/v1/experiments", "experiments", s.experiments)
	route("/v1/", "unknown", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no route %s: see docs/verdictd.md for the API", r.URL.Path)
	})
	route("/healthz", "healthz", s.healthz)
	route("/readyz", "readyz", s.readyz)
	mux.Handle("/metrics", s.metrics.handler())
	route("/r/{owner}/{repo}", "page", s.repoPage)
	route("/r/{owner}/{repo}/experiments", "experiments-page", s.experimentsPage)
	route("/{$}", "index", s.indexPage)
	route("/", "unknown", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no page %s: the pages are / and /r/OWNER/REPO", r.URL.Path)
	})
	return mux
}

// statusWriter remembers the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// observe counts, times and logs each request by its route's name (never
// by its path, whose values are unbounded; never its Authorization).
func (s *server) observe(name string, h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		h(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		took := time.Since(start)
		s.metrics.requests.WithLabelValues(name, strconv.Itoa(sw.status)).Inc()
		s.metrics.latency.WithLabelValues(name).Observe(took.Seconds())
		lvl := slog.LevelInfo
		if name == "healthz" || name == "readyz" {
			lvl = slog.LevelDebug
		}
		s.log.Log(r.Context(), lvl, "request", "method", r.Method, "route", name, "path", r.URL.Path, "status", sw.status, "ms", float64(took.Microseconds())/1000)
	})
}

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	if err := s.svc.Ready(r.Context()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "the store does not answer: %v", err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// refuse answers an auth error; anything else is the service's.
func (s *server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if ae, ok := err.(*authError); ok {
		if ae.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="perfgate-verdictd"`)
		}
		writeError(w, ae.status, "%s", ae.msg)
		return
	}
	s.writeServiceError(w, r, err)
}

// canRead says whether r may read repo's verdicts, answering when not.
func (s *server) canRead(w http.ResponseWriter, r *http.Request, repo string) bool {
	if s.auth.ReadsPublic {
		return true
	}
	if _, err := s.auth.authorize(r, repo); err != nil {
		s.refuse(w, r, err)
		return false
	}
	return true
}
