package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// DefaultMaxBody bounds a request body: a gate's JSON report is tens of
// kilobytes; 4 MiB leaves room for large plans.
const DefaultMaxBody = 4 << 20

// decodeStrict reads r's body, at most limit bytes, into v, refusing
// unknown fields and trailing data. It answers the client itself and
// returns false on failure: 413 past the limit, 400 naming the field.
func decodeStrict(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "the body is %s: send application/json", ct)
		return false
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "the body is over the limit of %d bytes (--max-body)", tooBig.Limit)
		return false
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: %v", err)
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeJSON(w, http.StatusBadRequest, decodeError(body, dec, err))
		return false
	}
	if dec.More() {
		writeError(w, http.StatusBadRequest, "the body holds more than one JSON value: send one object")
		return false
	}
	return true
}

// decodeError words a JSON error: an unknown field by its name, a wrong
// type by its field, a syntax error by its line.
func decodeError(body []byte, dec *json.Decoder, err error) apiError {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apiError{Error: fmt.Sprintf("unknown field %q: the fields are listed in docs/verdictd.md (a typo, or a newer client than this service)", name), Field: name}
	case errors.As(err, &te):
		return apiError{Error: fmt.Sprintf("field %q: a JSON %s cannot be a %s", te.Field, te.Value, te.Type), Field: te.Field}
	case errors.As(err, &se):
		line := 1 + bytes.Count(body[:min(int(se.Offset), len(body))], []byte("\n"))
		return apiError{Error: fmt.Sprintf("the body is not JSON: line %d: %v", line, se)}
	case errors.Is(err, io.EOF):
		return apiError{Error: "the body is empty: send a JSON object"}
	}
	return apiError{Error: fmt.Sprintf("the body is not the JSON expected: %v", err)}
}
