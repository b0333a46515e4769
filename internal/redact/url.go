package redact

import "strings"

// URL is raw as a message may quote it, whether or not it parses: what
// lies between its "//" and its last "@" (a user name and password) is
// replaced by Mask, and without a "//" before that "@" everything before
// it is (user:pw@host typed without a scheme). url.URL.Redacted needs a
// URL that parses and keeps the user name, but a refusal of one that does
// not parse is just where a mistyped password (an '@' or a '%' in it)
// shows; the last '@' is taken because such a password may hold one.
func URL(raw string) string {
	j := strings.LastIndex(raw, "@")
	if j < 0 {
		return raw
	}
	if i := strings.Index(raw, "//"); i >= 0 && i < j {
		return raw[:i+2] + Mask + raw[j:]
	}
	return Mask + raw[j:]
}
