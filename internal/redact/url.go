package redact

import (
	"regexp"
	"strings"
)

// URL is raw as a message may quote it, whether or not it parses: what
// lies between its "//" and its last "@" (a user name and password) is
// replaced by Mask, and without a "//" before that "@" everything before
// it is (user:pw@host typed without a scheme). url.URL.Redacted needs a
// URL that parses and keeps the user name, but a refusal of one that does
// not parse is just where a mistyped password (an '@' or a '%' in it)
// shows; the last '@' is taken because such a password may hold one.
// keep are strings holding an '@' that raw may carry and that end no user
// part, such as a contract's @PORT@: they are left as they are.
func URL(raw string, keep ...string) string {
	// Each kept string stands aside as a NUL-framed index while the '@'
	// is looked for; a URL holds no NUL.
	hidden := raw
	for i, k := range keep {
		if k != "" {
			hidden = strings.ReplaceAll(hidden, k, "\x00"+string(rune('0'+i))+"\x00")
		}
	}
	j := strings.LastIndex(hidden, "@")
	if j < 0 {
		return raw
	}
	if i := strings.Index(hidden, "//"); i >= 0 && i < j {
		hidden = hidden[:i+2] + Mask + hidden[j:]
	} else {
		hidden = Mask + hidden[j:]
	}
	for i, k := range keep {
		if k != "" {
			hidden = strings.ReplaceAll(hidden, "\x00"+string(rune('0'+i))+"\x00", k)
		}
	}
	return hidden
}

// urlUser is a URL's scheme and user part in free text, up to the last
// '@' before the host (a password may hold one).
var urlUser = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s/]*@`)

// URLsIn is text, a program's output or a command line, with every URL's
// user name and password as Mask: a program that cannot reach a store
// tends to print the connection string it was given.
func URLsIn(text string) string {
	return urlUser.ReplaceAllString(text, "${1}"+Mask+"@")
}
