// Package redact replaces secret values with "***" in text on its way out:
// strings, errors (whose message may quote a request, a URL or a host) and
// streams such as an arm's log, where a secret may arrive split across two
// writes. One Set serves all three, so a message, a log and an artifact are
// redacted by the same rule: at each position the longest secret that
// starts there is replaced.
package redact

import (
	"io"
	"sort"
	"strings"
	"sync"
)

// Mask is what every secret is replaced with.
const Mask = "***"

// Set is a set of secret values. The zero Set and a nil *Set redact nothing.
type Set struct {
	secrets []string // longest first, no empty values, no duplicates
	maxLen  int
	first   [256]bool // the first bytes of the secrets: where one may begin
}

// New makes a set of the given values; empty values are ignored.
func New(values ...string) *Set {
	s := &Set{}
	seen := map[string]bool{}
	for _, v := range values {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		s.first[v[0]] = true
		s.secrets = append(s.secrets, v)
		s.maxLen = max(s.maxLen, len(v))
	}
	sort.SliceStable(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	return s
}

// Values returns the secrets, longest first (for the runner's ::add-mask::).
func (s *Set) Values() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.secrets...)
}

// Empty reports whether the set holds no secret.
func (s *Set) Empty() bool { return s == nil || len(s.secrets) == 0 }

// String returns text with every secret replaced by Mask.
func (s *Set) String(text string) string {
	if s.Empty() {
		return text
	}
	out, rest := s.cut(text, true)
	return out + rest
}

// cut redacts text up to the point from which a secret might still be
// completed by more text; it returns the redacted part and the undecided
// rest (empty when final). Only a tail shorter than the longest secret can
// be undecided: it starts where a secret would begin and run past the end.
func (s *Set) cut(text string, final bool) (done, rest string) {
	var b strings.Builder
	i := 0
	for {
		start, n := s.earliest(text, i)
		if !final {
			if p := s.partial(text, i); p >= 0 && (start < 0 || p <= start) {
				// A secret may begin at p once more text comes; at p ==
				// start it would be a longer one than the match.
				b.WriteString(text[i:p])
				return b.String(), text[p:]
			}
		}
		if start < 0 {
			break
		}
		b.WriteString(text[i:start])
		b.WriteString(Mask)
		i = start + n
	}
	b.WriteString(text[i:])
	return b.String(), ""
}

// partial is the first position at or after from where text's end is the
// start of a longer secret, or -1.
func (s *Set) partial(text string, from int) int {
	for p := max(from, len(text)-(s.maxLen-1)); p < len(text); p++ {
		if s.first[text[p]] && s.begins(text[p:]) {
			return p
		}
	}
	return -1
}

// earliest finds the secret starting earliest at or after from (the longest
// of those starting there), returning its start and length, or -1.
func (s *Set) earliest(text string, from int) (int, int) {
	best, bestLen := -1, 0
	for _, sec := range s.secrets {
		j := strings.Index(text[from:], sec)
		if j < 0 {
			continue
		}
		j += from
		if best < 0 || j < best || j == best && len(sec) > bestLen {
			best, bestLen = j, len(sec)
		}
	}
	return best, bestLen
}

// begins reports whether t is the start of a secret longer than t.
func (s *Set) begins(t string) bool {
	for _, sec := range s.secrets {
		if len(sec) > len(t) && strings.HasPrefix(sec, t) {
			return true
		}
	}
	return false
}

// Error wraps err so its message is redacted; errors.Is and errors.As still
// see the original chain (its exit code included). A nil err stays nil.
func (s *Set) Error(err error) error {
	if err == nil || s.Empty() {
		return err
	}
	return &redacted{err: err, set: s}
}

type redacted struct {
	err error
	set *Set
}

func (r *redacted) Error() string { return r.set.String(r.err.Error()) }
func (r *redacted) Unwrap() error { return r.err }

// Writer redacts a stream: text that may still turn out to begin a secret
// is held until the next Write or Close decides it. It is safe for
// concurrent use.
type Writer struct {
	mu   sync.Mutex
	set  *Set
	w    io.Writer
	held string
	err  error
}

// NewWriter returns a Writer that passes redacted text on to w.
func (s *Set) NewWriter(w io.Writer) *Writer { return &Writer{set: s, w: w} }

// Write redacts p and writes what is decided. It reports len(p) written
// when the underlying writer took everything decided so far.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return 0, w.err
	}
	if w.set.Empty() {
		if _, err := w.w.Write(p); err != nil {
			w.err = err
			return 0, err
		}
		return len(p), nil
	}
	done, rest := w.set.cut(w.held+string(p), false)
	w.held = rest
	if done != "" {
		if _, err := io.WriteString(w.w, done); err != nil {
			w.err = err
			return 0, err
		}
	}
	return len(p), nil
}

// Close writes what is held (redacted as final text). It does not close
// the underlying writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if w.held == "" {
		return nil
	}
	out := w.set.String(w.held)
	w.held = ""
	if _, err := io.WriteString(w.w, out); err != nil {
		w.err = err
		return err
	}
	return nil
}
