package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/perfgate/perfgate/internal/verdict"
)

// apiError is every error's body: a message a person can act on.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, format string, a ...any) {
	writeJSON(w, status, apiError{Error: fmt.Sprintf(format, a...)})
}

// writeServiceError answers an error of the service with its status: 400
// for refused input (naming the field), 404, 409 for a release line that
// may not be given, 500 for the rest (the store).
func (s *server) writeServiceError(w http.ResponseWriter, r *http.Request, err error) {
	var in *verdict.InputError
	switch {
	case errors.As(err, &in):
		writeJSON(w, http.StatusBadRequest, apiError{Error: in.Error(), Field: in.Field})
	case errors.Is(err, verdict.ErrNotFound):
		writeError(w, http.StatusNotFound, "%v", err)
	case errors.Is(err, verdict.ErrNoBase), errors.Is(err, verdict.ErrNotFinal):
		writeError(w, http.StatusConflict, "%v", err)
	default:
		s.log.Error("serving a request", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "the service failed: %v", err)
	}
}

// allow answers 405 unless r's method is one of methods.
func allow(w http.ResponseWriter, r *http.Request, methods ...string) bool {
	for _, m := range methods {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(methods, ", "))
	writeError(w, http.StatusMethodNotAllowed, "%s %s: use %s", r.Method, r.URL.Path, strings.Join(methods, " or "))
	return false
}
