package redact_test

import (
	"testing"

	"github.com/perfgate/perfgate/internal/redact"
)

func TestURL(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
		{"http://user:s3cret@127.0.0.1:8080/x", "http://***@127.0.0.1:8080/x"},
		// Does not parse (an invalid escape, an '@' in the password):
		// the whole user part goes all the same.
		{"http://user:pa@ss%zz-s3cret@127.0.0.1:8080/x", "http://***@127.0.0.1:8080/x"},
		{"postgres://perfgate:s3cret@127.0.0.1:notaport/db", "postgres://***@127.0.0.1:notaport/db"},
		{"user:s3cret@127.0.0.1:8080", "***@127.0.0.1:8080"}, // typed without a scheme
		{"user:s3cret@127.0.0.1//x", "***@127.0.0.1//x"},
		{"127.0.0.1:8080", "127.0.0.1:8080"},
		{"", ""},
	} {
		if got := redact.URL(c.raw); got != c.want {
			t.Errorf("URL(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
	// A contract's @PORT@ holds '@'s that end no user part.
	for _, c := range []struct{ raw, want string }{
		{"http://127.0.0.1:@PORT@/health", "http://127.0.0.1:@PORT@/health"},
		{"http://u:s3cret@127.0.0.1:@PORT@/health", "http://***@127.0.0.1:@PORT@/health"},
		{"http://u:pa@ss%zz@127.0.0.1:@PORT@/@PORT@", "http://***@127.0.0.1:@PORT@/@PORT@"},
	} {
		if got := redact.URL(c.raw, "@PORT@"); got != c.want {
			t.Errorf("URL(%q, @PORT@) = %q, want %q", c.raw, got, c.want)
		}
	}
}
