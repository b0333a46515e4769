// Package pgdsntest holds the DSNs that do not parse, each with a password,
// that every reader of a PostgreSQL DSN is tested with, and the check of
// its refusal: said, and without the password.
package pgdsntest

import (
	"strings"
	"testing"
)

// Unparsable are DSNs pgx refuses, each holding secret in its password.
// pgx's own message quotes the first one's password from its '@' on
// ("xxxxx@ss%zz-<secret>"); the others it masks, but a reader must not
// lean on that.
func Unparsable(secret string) []string {
	return []string{
		"postgres://perfgate:pa@ss%zz-" + secret + "@127.0.0.1:5432/perf_head",
		"postgres://perfgate:" + secret + "@127.0.0.1:notaport/perf_head",
		"host=127.0.0.1 password=" + secret + " port=notaport",
	}
}

// CheckRefusal fails t unless err refuses the DSN, says it does not parse
// and holds no part of secret; what names the reader in the message.
func CheckRefusal(t testing.TB, what string, err error, secret string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%s took a DSN that does not parse", what)
	case strings.Contains(err.Error(), secret):
		t.Errorf("%s's refusal quotes the password: %q", what, err)
	case !strings.Contains(err.Error(), "the DSN does not parse"):
		t.Errorf("%s's refusal does not say the DSN does not parse: %q", what, err)
	}
}
