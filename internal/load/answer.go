package load

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/perfgate/perfgate/internal/redact"
)

// AnswerRule says what a group's answer must hold besides an expected
// status: a handler that breaks and answers 200 with an empty body would
// otherwise count as a fast success. An answer with an expected status that
// fails any of these is a wrong answer, counted apart from wrong statuses
// (GroupStats.WrongAnswers) and, like them, not a success. The zero value
// checks nothing, and the parser then keeps no body byte for it.
//
// Only the body's first MaxAnswerBody bytes are read: a text past them is
// not found, and a JSON body longer than that cannot be read whole, so its
// expectations fail.
type AnswerRule struct {
	// Body must occur in the body as written; written between slashes
	// (/^\{"ok":true/) it is a regular expression, Go's RE2 syntax, the
	// body must match.
	Body string
	// JSON are dotted paths into the JSON body and the value each must
	// hold there.
	JSON []JSONExpect
	// Header are headers the answer must carry.
	Header []HeaderExpect
}

// JSONExpect is one expect_json entry: Path is dotted ("items.0.id"; a
// number steps into an array), Value a string, a bool or a number (int,
// int64 or float64; compared as numbers, so 42 matches 42.0).
type JSONExpect struct {
	Path  string
	Value any
}

// HeaderExpect is one expect_header entry: the header Name (any case) must
// be present with Value, compared exactly after trimming, or, written
// between slashes, matching it as a regular expression.
type HeaderExpect struct {
	Name, Value string
}

// MaxAnswerBody is how much of a body is kept to check an AnswerRule: the
// hit rule's bound, so one buffer serves both.
const MaxAnswerBody = MaxHitBody

// maxSampleBody is how much of an offending body a report shows.
const maxSampleBody = 512

// maxHeaderExpects bounds a rule's headers: the parser keeps which it saw
// in one word.
const maxHeaderExpects = 32

// AnswerSample is one wrong answer as a report shows it: which expectation
// failed and why, and the start of the body (secrets redacted, then cut
// at 512 bytes, line breaks written \n).
type AnswerSample struct {
	Expectation string `json:"expectation"`
	Why         string `json:"why"`
	Status      int    `json:"status"`
	Body        string `json:"body"`
	Cut         bool   `json:"cut,omitempty"` // the body was longer than what Body shows
}

// String is the sample in one line: `expect_json "items.0.id" = 42: the
// body has no "items.0.id"; body (200): {}`.
func (s *AnswerSample) String() string {
	cut := ""
	if s.Cut {
		cut = " (cut)"
	}
	return fmt.Sprintf("%s: %s; body (%d)%s: %s", s.Expectation, s.Why, s.Status, cut, s.Body)
}

// WrongAnswerLine is how every report names a group's wrong answers: "group
// items: 40 wrong answers; first: expect_json "items.0.id" = 42: the body
// has no "items"; body (200): {}". first may be nil.
func WrongAnswerLine(group string, n uint64, first *AnswerSample) string {
	line := fmt.Sprintf("group %s: %d wrong answers", group, n)
	if first != nil {
		line += "; first: " + first.String()
	}
	return line
}

// answerMatch is an AnswerRule made ready for the parser.
type answerMatch struct {
	expect  []int // the group's expected statuses: only those answers are checked
	body    []byte
	bodyRE  *regexp.Regexp
	json    []jsonCheck
	headers []headerCheck
	redact  *redact.Set // masks a reason
	bodyRed *redact.Set // masks a body: redact with the JSON forms (withJSONForms)

	// sampled is set by the first wrong answer, which alone copies its
	// body: a head answering every request wrong must not allocate per
	// request for it.
	sampled atomic.Bool
}

type jsonCheck struct {
	path []string
	want any // bool, string or float64
	says string
}

type headerCheck struct {
	name  []byte // lower case
	value []byte
	re    *regexp.Regexp
	says  string
}

// sampleMasks are an attack's secrets as its wrong-answer samples hide
// them, made once per attack (endpointFor) so that no sample builds a set:
// text for a reason, which quotes decoded values, and body for a body, in
// which a JSON answer carries each secret escaped as well.
type sampleMasks struct{ text, body *redact.Set }

func newSampleMasks(red *redact.Set) sampleMasks {
	return sampleMasks{text: red, body: withJSONForms(red)}
}

// newAnswerMatch compiles r for a group expecting those statuses; nil when
// r checks nothing. Secrets in a sample are masked through masks.
func newAnswerMatch(r *AnswerRule, expect []int, masks sampleMasks) (*answerMatch, error) {
	if r == nil || (r.Body == "" && len(r.JSON) == 0 && len(r.Header) == 0) {
		return nil, nil
	}
	m := &answerMatch{expect: expect, redact: masks.text, bodyRed: masks.body}
	if r.Body != "" {
		if pat, ok := slashed(r.Body); ok {
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("expect_body %s is not a regular expression: %w", r.Body, err)
			}
			m.bodyRE = re
		} else {
			m.body = []byte(r.Body)
		}
	}
	for _, j := range r.JSON {
		path := strings.Split(j.Path, ".")
		if slices.Contains(path, "") {
			return nil, fmt.Errorf("expect_json path %q has an empty step", j.Path)
		}
		c := jsonCheck{path: path}
		switch v := j.Value.(type) {
		case bool, string, float64:
			c.want = v
		case int:
			c.want = float64(v)
		case int64:
			c.want = float64(v)
		default:
			return nil, fmt.Errorf("expect_json %q = %v (%T) is not a string, a bool or a number", j.Path, j.Value, j.Value)
		}
		c.says = fmt.Sprintf("expect_json %q = %s", j.Path, jsonText(c.want))
		m.json = append(m.json, c)
	}
	if len(r.Header) > maxHeaderExpects {
		return nil, fmt.Errorf("expect_header names %d headers; at most %d are checked", len(r.Header), maxHeaderExpects)
	}
	for _, h := range r.Header {
		c := headerCheck{name: []byte(strings.ToLower(strings.TrimSpace(h.Name)))}
		val := strings.TrimSpace(h.Value)
		if pat, ok := slashed(val); ok {
			re, err := regexp.Compile(pat)
			if err != nil {
				return nil, fmt.Errorf("expect_header %s = %s is not a regular expression: %w", h.Name, h.Value, err)
			}
			c.re = re
			c.says = fmt.Sprintf("expect_header %s = %s", h.Name, val)
		} else {
			c.value = []byte(val)
			c.says = fmt.Sprintf("expect_header %s = %q", h.Name, val)
		}
		m.headers = append(m.headers, c)
	}
	return m, nil
}

// slashed reports whether s is written /.../, and the pattern inside.
func slashed(s string) (string, bool) {
	if len(s) >= 2 && s[0] == '/' && s[len(s)-1] == '/' {
		return s[1 : len(s)-1], true
	}
	return "", false
}

func (m *answerMatch) readsBody() bool { return m.body != nil || m.bodyRE != nil || len(m.json) > 0 }

// headerSeen returns the bits of the header checks the header line meets.
func (m *answerMatch) headerSeen(name, val []byte) (bits uint32) {
	for i := range m.headers {
		c := &m.headers[i]
		if !equalFoldLower(name, c.name) {
			continue
		}
		if c.re != nil && c.re.Match(val) || c.re == nil && bytes.Equal(val, c.value) {
			bits |= 1 << i
		}
	}
	return bits
}

// check judges a finished answer: wrong is false for a right one, or one
// whose status is not expected (that is a wrong status, counted as such).
// The first wrong answer of the attack also returns its sample.
func (m *answerMatch) check(status int, body []byte, cut bool, seen uint32) (wrong bool, sample *AnswerSample) {
	if !isExpected(m.expect, status) {
		return false, nil
	}
	says, why := m.first(body, cut, seen)
	if says == "" {
		return false, nil
	}
	if !m.sampled.CompareAndSwap(false, true) {
		return true, nil
	}
	// The first wrong answer only: the reason is worked out in words, and
	// the body copied.
	return true, m.sample(status, body, cut, says, why)
}

// first names the first expectation the answer fails and why ("" when it
// meets them all). It allocates only when the rule reads JSON, which needs
// the body decoded.
func (m *answerMatch) first(body []byte, cut bool, seen uint32) (says, why string) {
	for i := range m.headers {
		if seen&(1<<i) == 0 {
			return m.headers[i].says, "the answer has no " + string(m.headers[i].name) + " header with that value"
		}
	}
	switch {
	case m.bodyRE != nil && !m.bodyRE.Match(body):
		return "expect_body " + m.bodyRE.String(), m.beyond(cut, "the body does not match it")
	case m.body != nil && !bytes.Contains(body, m.body):
		return fmt.Sprintf("expect_body %q", m.body), m.beyond(cut, "the body does not contain it")
	}
	if len(m.json) == 0 {
		return "", ""
	}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		if cut {
			return m.json[0].says, fmt.Sprintf("the body is longer than the %d KiB read, so its JSON could not be read whole", MaxAnswerBody>>10)
		}
		return m.json[0].says, "the body is not JSON"
	}
	for _, c := range m.json {
		got, where := walk(doc, c.path)
		if where != "" {
			return c.says, where
		}
		if !sameJSON(got, c.want) {
			return c.says, fmt.Sprintf("%q holds %s", strings.Join(c.path, "."), m.shown(got))
		}
	}
	return "", ""
}

// shown is a value found in a JSON body as a reason quotes it: encoded,
// at most 80 bytes. The secrets are masked in the decoded strings, before
// the encoding escapes them (a secret holding a quote, a backslash, a tab
// or one of <>& would no longer be found), and the whole text is masked
// before the cut (masked after, a secret the cut crosses would show its
// start).
func (m *answerMatch) shown(v any) string {
	if m.redact.Empty() {
		return cutText(jsonText(v), 80)
	}
	return cutText(m.redact.String(jsonText(masked(v, m.redact))), 80)
}

// masked is v, decoded JSON, with red's secrets masked in every string,
// the objects' keys included.
func masked(v any, red *redact.Set) any {
	switch x := v.(type) {
	case string:
		return red.String(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[red.String(k)] = masked(e, red)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = masked(e, red)
		}
		return out
	}
	return v
}

func (m *answerMatch) beyond(cut bool, why string) string {
	if cut {
		return why + fmt.Sprintf(" (only its first %d KiB are read)", MaxAnswerBody>>10)
	}
	return why
}

func (m *answerMatch) sample(status int, body []byte, cut bool, says, why string) *AnswerSample {
	text, longer := showBody(body, m.bodyRed)
	return &AnswerSample{Expectation: says, Why: m.redact.String(why), Status: status, Body: text, Cut: cut || longer}
}

// ShowBody is a body as a report shows it: with red's secrets as ***, its
// first 512 bytes on one line (line breaks written \n, bytes that are not
// UTF-8 as ?); cut says there was more. The secrets are masked in the whole
// body before the cut, and before the escapes and the UTF-8 repair change
// its bytes: masked after, a secret the cut crosses would no longer be
// whole and its start would be shown, and one holding a tab would no
// longer be found. They are masked as written and as a JSON string
// carries them, since a JSON answer echoing one escapes its quotes,
// backslashes, tabs and <>&. Each call works those forms out anew; an
// attack does it once (sampleMasks).
func ShowBody(body []byte, red *redact.Set) (text string, cut bool) {
	return showBody(body, withJSONForms(red))
}

// showBody is ShowBody with the secrets' JSON forms already in masks.
func showBody(body []byte, masks *redact.Set) (text string, cut bool) {
	text = masks.String(string(body))
	cut = len(text) > maxSampleBody
	text = text[:min(len(text), maxSampleBody)]
	for cut && len(text) > 0 {
		// Not the start of a rune the cut split.
		if r, _ := utf8.DecodeLastRuneInString(text); r != utf8.RuneError {
			break
		}
		text = text[:len(text)-1]
	}
	text = strings.ToValidUTF8(text, "?")
	text = lineBreaks.Replace(text)
	return text, cut
}

// lineBreaks writes a body's line breaks and tabs as escapes, so a sample
// stays on one line.
var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`, "\t", `\t`)

// withJSONForms is red with each secret also as a JSON string holds it,
// escaped as encoding/json writes it and as encoders that leave <>& alone
// do.
func withJSONForms(red *redact.Set) *redact.Set {
	if red.Empty() {
		return red
	}
	vals := red.Values()
	for _, v := range red.Values() {
		for _, html := range []bool{true, false} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			if enc.Encode(v) == nil {
				vals = append(vals, strings.TrimSuffix(b.String(), "\n")[1:b.Len()-2])
			}
		}
	}
	return redact.New(vals...)
}

// walk follows path into doc; where says which step is missing ("" when
// found).
func walk(doc any, path []string) (v any, where string) {
	v = doc
	for i, k := range path {
		at := strings.Join(path[:i+1], ".")
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[k]
			if !ok {
				return nil, fmt.Sprintf("the body has no %q", at)
			}
			v = next
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= len(x) {
				return nil, fmt.Sprintf("the body has no %q (%q is a list of %d)", at, strings.Join(path[:i], "."), len(x))
			}
			v = x[n]
		default:
			return nil, fmt.Sprintf("the body has no %q", at)
		}
	}
	return v, ""
}

// sameJSON compares a decoded value (numbers as json.Number) with a wanted
// bool, string or float64.
func sameJSON(got, want any) bool {
	if n, ok := got.(json.Number); ok {
		f, err := n.Float64()
		w, isNum := want.(float64)
		return err == nil && isNum && f == w
	}
	return got == want
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// cutText is s cut to n bytes, never inside a character.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
