package load_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// TestRefusesTargetsWithReasons: each target perfgate cannot use is refused
// before anything is sent, with the reason and the fix, and credentials in
// a target are never repeated.
func TestRefusesTargetsWithReasons(t *testing.T) {
	src, groups := getSource("g")
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"http://127.0.0.1:0", []string{"port 0 is not one a server can listen on", "1 to 65535"}},
		{"http://127.0.0.1:65536", []string{"port 65536 is not one"}},
		{"http://127.0.0.1:99999999999999999999", []string{"is not one"}},
		{"http://127.0.0.1:", []string{"port after the colon is missing"}},
		{"http://u:hunter2pw@127.0.0.1:8080", []string{"http://127.0.0.1:8080", "carries credentials", "secret = true", "Authorization"}},
		{"http://tokenuser@127.0.0.1:8080/api", []string{"http://127.0.0.1:8080/api", "carries credentials"}},
		{"http://u:hunter2pw@[::1", []string{"want a base URL"}},
		{"http://192.0.2.1:80", []string{"not loopback"}},
		{"ftp://127.0.0.1", []string{"scheme must be http or https"}},
		{"127.0.0.1:8080", []string{"want a base URL"}},
		{"http://127.0.0.1/?q=1", []string{"drop the query"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			_, err := load.Run(context.Background(), load.Attack{Target: tc.target, Source: src, Groups: groups,
				Pacer: load.ConstantPacer{Freq: 1}, Duration: time.Second})
			if err == nil {
				t.Fatal("no error, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, secret := range []string{"hunter2pw", "tokenuser"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q repeats the credential %q", err, secret)
				}
			}
		})
	}
}

// TestTargetRefusalsHideQueryValues: a target's query may carry a token
// (?api_key=...) the plan never declared secret, so no refusal quotes a
// query value or the fragment; it still names the key to drop. A URL that
// does not parse is quoted with its parts guessed, and masked whole after
// its scheme when an '@' past the query makes the guess unsure.
func TestTargetRefusalsHideQueryValues(t *testing.T) {
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"http://127.0.0.1:8080/?api_key=s3cret&x=1#fr4g", []string{"drop the query", "api_key=***", "x=***", "#***"}},
		{"http://127.0.0.1:8080/#s3cret", []string{"drop the query or fragment", "http://127.0.0.1:8080/#***"}},
		{"http://127.0.0.1:8080/?s3cret", []string{"drop the query", "?***"}},
		{"ftp://127.0.0.1/?api_key=s3cret", []string{"api_key=***"}},
		{"http://127.0.0.1:0/?api_key=s3cret", []string{"api_key=***"}},
		{"http://u:hunter2pw@127.0.0.1:8080/?api_key=s3cret", []string{"carries credentials", "http://127.0.0.1:8080/?api_key=***"}},
		{"http://[::1/?api_key=s3cret#fr4g", []string{"want a base URL", "http://[::1/?api_key=***#***"}},
		{"127.0.0.1:8080/?api_key=s3cret", []string{"want a base URL", "api_key=***"}},
		{"/?api_key=s3cret", []string{"want a base URL", "api_key=***"}},
		{"http://u:hunter2pw@[::1/?api_key=s3cret", []string{"want a base URL", "http://***@[::1/?api_key=***"}},
		{"http://[::1/?api_key=ab@s3cret", []string{"want a base URL", `"http://***"`}},
		{"http://u:hunter2pw?s3cret@[::1/", []string{"want a base URL", `"http://***"`}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			_, _, err := load.ParseTarget(tc.target)
			if err == nil {
				t.Fatal("no error, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			for _, secret := range []string{"s3cret", "fr4g", "hunter2pw", "x=1"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q repeats %q", err, secret)
				}
			}
		})
	}
}
