package publish

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
)

const line = "Performance gate: compared with v1.3.0 (the previous release tag); pass."

func TestReleaseLineWrittenOnce(t *testing.T) {
	releaseLineStart, releaseLineEnd := ReleaseLineMarkers("")
	block := releaseLineStart + "\n" + line + "\n" + releaseLineEnd
	searchStart, searchEnd := ReleaseLineMarkers("search")
	searchBlock := searchStart + "\nPerformance: search\n" + searchEnd
	for _, tc := range []struct {
		name, body string
		draft      bool
		want       string
	}{
		{"empty body", "", false, block},
		{"notes kept", "## What's changed\n* faster search\n", false, "## What's changed\n* faster search\n\n" + block},
		{"earlier line replaced", "notes\n\n" + releaseLineStart + "\nPerformance gate: compared with v1.2.0; regression.\n" + releaseLineEnd + "\n\nmore notes",
			false, "notes\n\n" + block + "\n\nmore notes"},
		{"a start marker without its end", "notes\n" + releaseLineStart + "\nkept text", false, "notes\n" + releaseLineStart + "\nkept text\n\n" + block},
		{"draft release", "draft notes", true, "draft notes\n\n" + block},
		{"two earlier lines become one", "notes\n\n" + block + "\n\n" + releaseLineStart + "\nPerformance gate: old\n" + releaseLineEnd + "\n\nend",
			false, "notes\n\n" + block + "\n\nend"},
		{"another plan's line kept", "notes\n\n" + searchBlock, false, "notes\n\n" + searchBlock + "\n\n" + block},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			f.addRelease("v1.2.0", "old", false)
			f.addRelease("v1.4.0", tc.body, tc.draft)
			c := f.client()
			ctx := context.Background()
			for range 2 {
				if err := c.SetReleaseLine(ctx, verdict.CheckTarget{Owner: "acme", Repo: "api"}, "v1.4.0", line); err != nil {
					t.Fatalf("SetReleaseLine: %v", err)
				}
			}
			got := f.releaseBody("v1.4.0")
			if got != tc.want {
				t.Errorf("body =\n%q\nwant\n%q", got, tc.want)
			}
			if n := strings.Count(got, "Performance gate:"); n != 1 {
				t.Errorf("%d perfgate lines in the body, want 1", n)
			}
			if n := len(f.callsTo("PATCH", "")); n != 1 {
				t.Errorf("%d edits over two calls, want 1 (the second finds the line there)", n)
			}
			if f.releaseBody("v1.2.0") != "old" {
				t.Error("another release was edited")
			}
		})
	}
}

func TestReleaseLineRefusals(t *testing.T) {
	for _, tc := range []struct{ name, tag, line, want string }{
		{"no base named", "v1.4.0", "", "the gate named no base"},
		{"several lines", "v1.4.0", "a\nb", "several lines"},
		{"no such release", "v9.9.9", line, "no release tagged v9.9.9"},
		{"no tag", "", line, "no release tag"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			f.addRelease("v1.4.0", "notes", false)
			err := f.client().SetReleaseLine(context.Background(), verdict.CheckTarget{Owner: "acme", Repo: "api"}, tc.tag, tc.line)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one saying %q", err, tc.want)
			}
			// The service waits for a release that is not there yet.
			if missing := tc.name == "no such release"; errors.Is(err, verdict.ErrNoRelease) != missing {
				t.Errorf("errors.Is(%v, ErrNoRelease) = %v, want %v", err, !missing, missing)
			}
			if f.releaseBody("v1.4.0") != "notes" {
				t.Error("the body changed")
			}
		})
	}
}
