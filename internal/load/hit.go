package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// HitRule says which answers are hits (a cache's, say): by status, by a
// header, or by a JSON field of the body; one of the three. Only an
// expected answer can be a hit: an answer with a status the group does not
// expect, or a wrong answer (AnswerRule), is counted as the failure it is
// and never as a hit (GroupStats.Hits). The zero value reads nothing, and
// the parser then pays nothing for it.
type HitRule struct {
	// Status are statuses that are hits; the group's other expected
	// statuses are misses.
	Status []int
	// Header is a header name (any case); the answer is a hit when it
	// carries it, and, when Value is set, with that value (trimmed,
	// compared exactly).
	Header, Value string
	// Field is a dotted path into a JSON body ("cache.hit"); the answer is
	// a hit when the field there equals FieldValue (a bool, a string or a
	// float64, as encoding/json decodes them). Only the body's first
	// MaxHitBody bytes are read: a field beyond them is a miss, counted in
	// GroupStats.HitBeyond.
	Field      string
	FieldValue any
}

// MaxHitBody is how much of a body is kept to look for a hit field.
const MaxHitBody = 64 << 10

// hitMatch is a HitRule made ready for the parser: the header name in lower
// case and the value as bytes, so no header line converts anything.
type hitMatch struct {
	status        []int
	header, value []byte
	hasValue      bool
	field         []string
	fieldValue    any
}

func newHitMatch(r *HitRule) (*hitMatch, error) {
	if r == nil || (len(r.Status) == 0 && r.Header == "" && r.Field == "") {
		return nil, nil
	}
	switch {
	case r.Header != "" && r.Field != "":
		return nil, fmt.Errorf("a hit rule names both a header (%s) and a JSON field (%s); name one", r.Header, r.Field)
	case len(r.Status) > 0 && (r.Header != "" || r.Field != ""):
		return nil, fmt.Errorf("a hit rule names both statuses (%v) and a header or a JSON field; name one", r.Status)
	}
	m := &hitMatch{}
	if len(r.Status) > 0 {
		m.status = slices.Clone(r.Status)
		return m, nil
	}
	if r.Header != "" {
		m.header = []byte(strings.ToLower(strings.TrimSpace(r.Header)))
		m.value = []byte(strings.TrimSpace(r.Value))
		m.hasValue = r.Value != ""
		return m, nil
	}
	m.field = strings.Split(r.Field, ".")
	for _, s := range m.field {
		if s == "" {
			return nil, fmt.Errorf("hit field %q has an empty step", r.Field)
		}
	}
	switch v := r.FieldValue.(type) {
	case bool, string, float64:
		m.fieldValue = v
	case int:
		m.fieldValue = float64(v)
	case int64:
		m.fieldValue = float64(v)
	default:
		return nil, fmt.Errorf("hit value %v (%T) is not a bool, a string or a number", r.FieldValue, r.FieldValue)
	}
	return m, nil
}

// statusHit reports whether a final answer's status is one the rule names.
func (m *hitMatch) statusHit(status int) bool { return slices.Contains(m.status, status) }

// headerHit reports whether a header line (name as sent, value trimmed) is
// the hit the rule names.
func (m *hitMatch) headerHit(name, val []byte) bool {
	return equalFoldLower(name, m.header) && (!m.hasValue || bytes.Equal(val, m.value))
}

// bodyHit looks for the field in a JSON body: hit when it is there with the
// value, beyond when the body was cut at MaxHitBody before the field was
// found (the document could not be decoded whole).
func (m *hitMatch) bodyHit(body []byte, cut bool) (hit, beyond bool) {
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return false, cut && (err == io.ErrUnexpectedEOF || err == io.EOF)
	}
	v := doc
	for _, k := range m.field {
		obj, ok := v.(map[string]any)
		if !ok {
			return false, false
		}
		if v, ok = obj[k]; !ok {
			return false, false
		}
	}
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		want, isNum := m.fieldValue.(float64)
		return err == nil && isNum && f == want, false
	}
	return v == m.fieldValue, false
}
