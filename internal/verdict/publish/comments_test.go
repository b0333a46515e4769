package publish

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCommentEditedNotDuplicated(t *testing.T) {
	for _, tc := range []struct {
		name     string
		before   int // other people's comments before perfgate's first
		after    int // and after it, before the re-run
		wantPage string
	}{
		{"alone", 0, 0, "1"},
		{"first page", 5, 5, "1"},
		{"second page", 120, 10, "2"},
		{"third page", 230, 40, "3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGitHub(t)
			c := f.client()
			ctx := context.Background()
			const pr = 7
			// A comment quoting perfgate's and one of another plan must stay.
			quote := "> " + Marker("api") + "\n> why is this slow?"
			f.addComment(pr, "octocat", quote)
			other := f.addComment(pr, "github-actions[bot]", Marker("web")+"\nweb report")
			for i := range tc.before {
				f.addComment(pr, "octocat", fmt.Sprintf("comment %d", i))
			}
			target := prTarget("perfgate (api)")
			if err := c.UpsertComment(ctx, target, "first report"); err != nil {
				t.Fatalf("first run: %v", err)
			}
			for i := range tc.after {
				f.addComment(pr, "octocat", fmt.Sprintf("later comment %d", i))
			}
			total := len(f.commentsOn(pr))
			listsBefore := len(f.callsTo("GET", "/comments"))
			if err := c.UpsertComment(ctx, target, "second report"); err != nil {
				t.Fatalf("re-run: %v", err)
			}
			all := f.commentsOn(pr)
			if len(all) != total {
				t.Errorf("the re-run posted a comment: %d comments, were %d", len(all), total)
			}
			var ours []fakeComment
			for _, cm := range all {
				if strings.HasPrefix(cm.Body, Marker("api")) {
					ours = append(ours, cm)
				}
				if cm.ID == other && cm.Body != Marker("web")+"\nweb report" {
					t.Errorf("the other plan's comment was changed to %q", cm.Body)
				}
				if strings.HasPrefix(cm.Body, ">") && cm.Body != quote {
					t.Errorf("the quoting comment was changed to %q", cm.Body)
				}
			}
			if len(ours) != 1 || ours[0].Body != Marker("api")+"\nsecond report" {
				t.Fatalf("perfgate's comments = %+v, want one holding the second report", ours)
			}
			if n := len(f.callsTo("POST", "/comments")); n != 1 {
				t.Errorf("%d comments posted over two runs, want 1", n)
			}
			if n := len(f.callsTo("PATCH", "/comments/"+fmt.Sprint(ours[0].ID))); n != 1 {
				t.Errorf("%d edits of perfgate's comment, want 1", n)
			}
			lists := f.callsTo("GET", "/comments")[listsBefore:]
			last := lists[len(lists)-1].Query
			if got := last.Get("page"); got != tc.wantPage && !(tc.wantPage == "1" && got == "") {
				t.Errorf("the re-run stopped reading at page %q, want %s", got, tc.wantPage)
			}
			if last.Get("per_page") != "100" {
				t.Errorf("per_page = %q, want 100", last.Get("per_page"))
			}
		})
	}
}

func TestCommentUnchangedIsNotEdited(t *testing.T) {
	f := newFakeGitHub(t)
	c := f.client()
	ctx := context.Background()
	for range 2 {
		if err := c.UpsertComment(ctx, prTarget("perfgate"), "same report"); err != nil {
			t.Fatal(err)
		}
	}
	if n, e := len(f.callsTo("POST", "/comments")), len(f.callsTo("PATCH", "")); n != 1 || e != 0 {
		t.Errorf("posted %d, edited %d; want 1 and 0", n, e)
	}
}

func TestCommentCutToGitHubsLimit(t *testing.T) {
	f := newFakeGitHub(t)
	if err := f.client().UpsertComment(context.Background(), prTarget("perfgate"), strings.Repeat("| p99 | 1.40 |\n", 6000)); err != nil {
		t.Fatal(err)
	}
	got := f.commentsOn(7)[0].Body
	if len(got) > MaxCommentBody || !utf8.ValidString(got) || !strings.HasPrefix(got, Marker("api")) || !strings.Contains(got, "perfgate cut this text") {
		t.Errorf("comment of %d bytes, marker first %v, says it was cut %v", len(got), strings.HasPrefix(got, Marker("api")), strings.Contains(got, "perfgate cut"))
	}
}

func TestMarkerCannotBeClosedByAPlanName(t *testing.T) {
	for _, tc := range []struct{ plan, want string }{
		{"api", "<!-- perfgate:plan=api -->"},
		{"", "<!-- perfgate:plan= -->"},
		{"a --> b\n", "<!-- perfgate:plan=a%20--%3E%20b%0A -->"},
	} {
		if got := Marker(tc.plan); got != tc.want {
			t.Errorf("Marker(%q) = %q, want %q", tc.plan, got, tc.want)
		}
	}
}
