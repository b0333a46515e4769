package load

import (
	"fmt"
	"sort"
	"strings"
)

// kindMeaning says in words what a run whose every request failed with
// that kind shows about the target.
var kindMeaning = map[string]string{
	KindRefused:   "nothing listens at the target's address and port",
	KindReset:     "the target reset every connection",
	KindTimeout:   "the target took connections but answered nothing within the request timeout",
	KindTLS:       "no TLS handshake with the target succeeded",
	KindClosed:    "the target closed every connection without an answer",
	KindMalformed: "what the target sent is not an HTTP/1.1 response",
	KindConnect:   "no connection to the target could be made",
}

// NoAnswer explains, when no measured request got an answer (a status,
// expected or not), why: the failures by kind and what they mean. It is
// empty when an answer came. Figures from such a run describe no target,
// so nothing may be judged on them.
func (r *Result) NoAnswer() string {
	s := r.Schedule
	if s.Intended == 0 {
		return "no arrival was due in the measured window; raise the rate or the duration"
	}
	t := r.Total()
	if t.Expected+t.Unexpected+t.WrongAnswers > 0 || t.Requests == 0 {
		return ""
	}
	kinds := make([]string, 0, len(t.Errors))
	for k := range t.Errors {
		kinds = append(kinds, k)
	}
	sort.Slice(kinds, func(i, j int) bool {
		if t.Errors[kinds[i]] != t.Errors[kinds[j]] {
			return t.Errors[kinds[i]] > t.Errors[kinds[j]]
		}
		return kinds[i] < kinds[j]
	})
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d x %s", t.Errors[k], k)
	}
	msg := fmt.Sprintf("no request of %d got an answer (%s)", t.Requests, strings.Join(parts, ", "))
	if len(kinds) == 0 {
		return msg
	}
	if m, ok := kindMeaning[kinds[0]]; ok {
		msg += ": " + m
	}
	return msg
}
