package publish_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/publish"
	"github.com/perfgate/perfgate/internal/verdict/publish/githubtest"
)

// TestAppPublishesPerOwner: one App installed on two owners publishes on
// each through that owner's installation (the fake answers another
// installation's token with GitHub's 404), and names an owner it is not
// installed on.
func TestAppPublishesPerOwner(t *testing.T) {
	gh := githubtest.New(t, "acme", "Beta")
	key, err := os.ReadFile(gh.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	c, err := publish.New(publish.Credentials{AppID: githubtest.AppID, PrivateKey: key}, gh.URL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		owner, sha string
		want       string // "" for published
	}{
		{"acme", strings.Repeat("a", 40), ""},
		{"beta", strings.Repeat("b", 40), ""}, // logins match without regard to case, as GitHub's do
		{"mallory", strings.Repeat("c", 40), "not installed on mallory"},
	} {
		err := c.CheckCompleted(ctx, verdict.CheckTarget{Owner: tc.owner, Repo: "api", SHA: tc.sha, Name: "perfgate", Event: "push"},
			verdict.Outcome{Word: verdict.WordPass, Title: "pass", Summary: "ok"})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.owner, err)
		case tc.want == "" && (len(gh.Checks(tc.sha)) != 1 || gh.Checks(tc.sha)[0].Conclusion != "success"):
			t.Errorf("%s: checks %+v, want one success", tc.owner, gh.Checks(tc.sha))
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.owner, err, tc.want)
		}
	}
	tokens := 0
	for _, call := range gh.Calls() {
		if strings.HasSuffix(call, "/access_tokens") {
			tokens++
		}
	}
	if tokens != 2 {
		t.Errorf("%d installation tokens made, want 2 (one per owner, reused)", tokens)
	}
	what, err := c.Probe(ctx)
	if err != nil || what != "GitHub App perfgate-test (31337), installed on acme, beta" {
		t.Errorf("Probe = %q, %v", what, err)
	}
}
