package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

// A group's expect_json checks what perfgate load's target answered: a
// head that answers 200 with {} where the plan expects "items.0.id" = 42
// exits 1 naming the group, the path and the body; the right answer
// passes.
func TestLoadWrongAnswers(t *testing.T) {
	t.Parallel()
	const plan = `[load]
rate = 20
warmup = "0s"
duration = "1s"

[[group]]
name = "items"
path = "/items"
expect = 200
expect_json = { "items.0.id" = 42 }
expect_header = { Content-Type = "/^application\\/json/" }
`
	for _, tc := range []struct {
		name, body string
		code       int
		says       []string
	}{
		{"empty object", `{}`, exit.Regression, []string{
			"items: 20 failed (0 unexpected status, 20 wrong answers, 0 errors)",
			`group items: 20 wrong answers; first: expect_json "items.0.id" = 42: the body has no "items"; body (200): {} FAIL`}},
		{"right answer", `{"items":[{"id":42}]}`, exit.Pass, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, tc.body)
			}))
			t.Cleanup(srv.Close)
			report := filepath.Join(t.TempDir(), "load.json")
			var out, errb bytes.Buffer
			err := RunIO(context.Background(), []string{"load", "--plan", writePlan(t, plan), "--target", srv.URL, "--out", report}, &IO{Out: &out, Err: &errb})
			if exit.Code(err) != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s%s", exit.Code(err), err, tc.code, out.String(), errb.String())
			}
			for _, want := range tc.says {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
			if tc.code == exit.Pass {
				return
			}
			if !strings.Contains(err.Error(), `group items: 20 wrong answers; first: expect_json "items.0.id" = 42`) {
				t.Errorf("error %q does not name the group and the path", err)
			}
			b, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct {
				Groups []struct {
					WrongAnswers uint64                             `json:"wrong_answers"`
					WrongAnswer  struct{ Expectation, Body string } `json:"wrong_answer"`
				}
			}
			if err := json.Unmarshal(b, &rep); err != nil || len(rep.Groups) != 1 || rep.Groups[0].WrongAnswers != 20 || rep.Groups[0].WrongAnswer.Body != "{}" {
				t.Errorf("the load report's group %+v (%v), want 20 wrong answers and the body", rep.Groups, err)
			}
		})
	}
}
