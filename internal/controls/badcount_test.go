package controls_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/plan"
)

// TestCounterRefusesCountsThatMeanNothing: a count of NaN or infinity
// compares false with every limit, and a count that fell grows by less
// than nothing, so each would let a head pass a counter it did not pass.
// The check stops instead (exit 2), naming the counter's plan line.
func TestCounterRefusesCountsThatMeanNothing(t *testing.T) {
	cases := []struct {
		name, field string
		answer      func(reads int64) string // the count endpoint's body at its nth read
		want        string
	}{
		{"NaN", "", func(int64) string { return "NaN" }, "/n gave NaN for the head, not a finite count"},
		{"infinite", "", func(int64) string { return "+Inf" }, "/n gave +Inf for the head, not a finite count"},
		{"NaN in a JSON string", "n", func(int64) string { return `{"n":"NaN"}` }, "/n gave NaN for the head, not a finite count"},
		{"beyond a float", "n", func(int64) string { return `{"n":1e400}` }, "field n of /n's answer is 1e400, beyond what a count can be"},
		{"fell: the service restarted", "", func(reads int64) string { return map[int64]string{1: "120", 2: "3"}[reads] },
			"the count fell from 120 to 3 while 10 requests of group g were sent to the head"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reads atomic.Int64
			app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/n" {
					fmt.Fprint(w, tc.answer(reads.Add(1)))
				}
			}))
			t.Cleanup(app.Close)
			field := ""
			if tc.field != "" {
				field = fmt.Sprintf("field = %q\n", tc.field)
			}
			p, err := plan.Parse("plan.toml", []byte(`[[group]]
name = "g"
path = "/g"
expect = 200

[[counter]]
name = "c"
group = "g"
requests = 10
url = "/n"
`+field))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := plan.ResolveVars(p, nil, func(string) string { return "" })
			o, err := controls.Run(context.Background(), controls.Spec{Plan: p, Vars: v, Head: controls.Target{Name: "head", URL: app.URL}})
			if err == nil {
				t.Fatalf("the check ran to %v", o.Counters)
			}
			if exit.Code(err) != exit.CannotJudge || !strings.HasPrefix(err.Error(), "plan.toml:6: counter c: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v (exit %d), want exit 2 naming plan.toml:6 and %q", err, exit.Code(err), tc.want)
			}
		})
	}
}

// TestSQLCountsAndStoreWritesOnAStore: sum() of an integer column is
// numeric in PostgreSQL, a number the counter reads; a NULL or NaN is not
// a count; and a [[store_writes]] table the store lacks is refused naming
// the plan's line, where it is fixed.
func TestSQLCountsAndStoreWritesOnAStore(t *testing.T) {
	ctx, dsn, conn := headStore(t)
	if _, err := conn.Exec(ctx, "CREATE TABLE calls (n bigint NOT NULL); INSERT INTO calls VALUES (0)"); err != nil {
		t.Fatal(err)
	}
	// The arm adds 1 to the calls for every second request: 50 %.
	var served atomic.Int64
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if served.Add(1)%2 == 0 {
			if _, err := conn.Exec(r.Context(), "UPDATE calls SET n = n + 1"); err != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}
	}))
	t.Cleanup(app.Close)
	head := controls.Target{Name: "head", URL: app.URL, DSN: dsn}
	const groups = "[[group]]\nname = \"g\"\npath = \"/g\"\nexpect = 200\n\n"
	cases := []struct {
		name, extra string
		grew        float64 // when the check runs
		want        string  // the refusal, when not
	}{
		{"sum is numeric", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nrequests = 20\nsql = \"SELECT sum(n) FROM calls\"\nmax_per_request = 50\n", 10, ""},
		{"NULL", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nrequests = 20\nsql = \"SELECT sum(n) FROM calls WHERE false\"\n", 0,
			"plan.toml:6: counter c: its sql gave NULL, not a number"},
		{"NaN", "[[counter]]\nname = \"c\"\ngroup = \"g\"\nrequests = 20\nsql = \"SELECT 'NaN'::float8\"\n", 0,
			"plan.toml:6: counter c: its sql gave NaN for the head, not a finite count"},
		{"a table the store lacks", "[[store_writes]]\ngroup = \"g\"\ntable = \"nothere\"\n", 0,
			"plan.toml:6: [[store_writes]]: store writes of nothere: "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := plan.Parse("plan.toml", []byte(groups+tc.extra))
			if err != nil {
				t.Fatal(err)
			}
			v, _ := plan.ResolveVars(p, nil, func(string) string { return "" })
			o, err := controls.Run(ctx, controls.Spec{Plan: p, Vars: v, Head: head, StoreSettle: time.Millisecond})
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want == "" && (len(o.Counters) != 1 || o.Counters[0].Grew() != tc.grew || o.Counters[0].Fail):
				t.Fatalf("%+v: want a growth of %v within the limit", o.Counters, tc.grew)
			case tc.want != "" && (err == nil || exit.Code(err) != exit.CannotJudge || !strings.HasPrefix(err.Error(), tc.want)):
				t.Fatalf("got %v (exit %d), want exit 2 starting %q", err, exit.Code(err), tc.want)
			}
		})
	}
}
