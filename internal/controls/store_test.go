package controls_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/perfgate/perfgate/internal/armdb"
	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/controls"
	"github.com/perfgate/perfgate/internal/pgdsn/pgdsntest"
	"github.com/perfgate/perfgate/internal/plan"
)

// TestStoreWritesAndSQLCounter uses a real PostgreSQL: a server on
// loopback records one row per request it answers, an SQL counter counts
// them, and the store-write accounting compares the table's writes with
// the answers, failing when there are fewer writes.
func TestStoreWritesAndSQLCounter(t *testing.T) {
	ctx, dsn, conn := headStore(t)
	if _, err := conn.Exec(ctx, "CREATE TABLE accesses (id serial PRIMARY KEY, at timestamptz DEFAULT now())"); err != nil {
		t.Fatal(err)
	}
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/emergency") {
			if _, err := conn.Exec(r.Context(), "INSERT INTO accesses DEFAULT VALUES"); err != nil {
				w.WriteHeader(http.StatusInternalServerError)
				return
			}
		}
	}))
	t.Cleanup(app.Close)

	p, err := plan.Parse("plan.toml", []byte(`
[[group]]
name = "emergency"
path = "/emergency"
expect = 200

[[group]]
name = "other"
path = "/other"
expect = 200

[[counter]]
name = "accesses"
group = "emergency"
requests = 30
sql = "SELECT count(*) FROM accesses"
max_per_request = 100

[[counter]]
name = "strict"
group = "emergency"
requests = 10
sql = "SELECT count(*) FROM accesses"
max_per_request = 50
`))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := plan.ResolveVars(p, nil, func(string) string { return "" })
	target := controls.Target{Name: "head", URL: app.URL, DSN: dsn}
	r, err := controls.RunCounter(ctx, p, v, p.Counters[0], target, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Sent != 30 || r.Grew() != 30 || r.Fail {
		t.Fatalf("one row per request at a limit of 100 %%: %+v (%s)", r, r.Line())
	}
	r, err = controls.RunCounter(ctx, p, v, p.Counters[1], target, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Fail || !strings.Contains(r.Line(), "10 requests sent, the count grew by 10 (100 % of the requests), over the limit of at most 50 %") {
		t.Fatalf("one row per request at a limit of 50 %%: %s", r.Line())
	}

	time.Sleep(armdb.FlushWait) // the statistics show the inserts after a flush
	w := plan.StoreWrites{Group: "emergency", Table: "accesses"}
	for _, c := range []struct {
		answers int64
		fail    bool
	}{{40, false}, {41, true}} {
		got, err := controls.StoreWrites(ctx, w, c.answers, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got.Writes != 40 || got.Fail != c.fail {
			t.Fatalf("40 rows written against %d answers: %+v", c.answers, got)
		}
		if !strings.Contains(got.Line(), "40 rows of accesses") {
			t.Fatalf("the line %q does not name the writes", got.Line())
		}
	}
	if _, err := controls.StoreWrites(ctx, plan.StoreWrites{Group: "emergency", Table: "nothere"}, 1, dsn); err == nil || !strings.Contains(err.Error(), "no table public.nothere") {
		t.Fatalf("a missing table gave %v", err)
	}
}

// TestCounterRefusesWrongAnswers: a count read from a group whose requests
// were not answered as the plan expects would not say what it claims.
func TestCounterReadsAndRefuses(t *testing.T) {
	calls := 0
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/n":
			w.Write([]byte(strings.Repeat(" ", 2) + itoa(int64(calls)) + "\n"))
		case "/json":
			w.Write([]byte(`{"calls":{"list":[{"n":` + itoa(int64(calls)) + `}]}}`))
		case "/bad":
			w.WriteHeader(http.StatusTeapot)
		default:
			calls++
		}
	}))
	t.Cleanup(app.Close)
	p, err := plan.Parse("plan.toml", []byte(`
[[group]]
name = "g"
path = "/g"
expect = 200

[[group]]
name = "teapot"
path = "/bad"
expect = 200

[[counter]]
name = "plain"
group = "g"
requests = 20
url = "/n"
max_per_request = 100

[[counter]]
name = "nested"
group = "g"
requests = 20
url = "/json"
field = "calls.list.0.n"
max_per_request = 99

[[counter]]
name = "missing"
group = "g"
url = "/json"
field = "calls.nope"
max_per_request = 5

[[counter]]
name = "wrong-answers"
group = "teapot"
url = "/n"
max_per_request = 5

[[counter]]
name = "rows"
group = "g"
sql = "SELECT count(*) FROM pg_class"
max_per_request = 5
`))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := plan.ResolveVars(p, nil, func(string) string { return "" })
	target := controls.Target{Name: "head", URL: app.URL}
	ctx := context.Background()
	r, err := controls.RunCounter(ctx, p, v, p.Counters[0], target, 1)
	if err != nil || r.Before != 0 || r.After != 20 || r.Fail {
		t.Fatalf("plain number: %+v, %v", r, err)
	}
	r, err = controls.RunCounter(ctx, p, v, p.Counters[1], target, 1)
	if err != nil || r.Before != 20 || r.After != 40 || !r.Fail {
		t.Fatalf("JSON by path, 100 %% against 99 %%: %+v, %v", r, err)
	}
	if _, err := controls.RunCounter(ctx, p, v, p.Counters[2], target, 1); err == nil || !strings.Contains(err.Error(), `no field "nope"`) {
		t.Fatalf("a missing field gave %v", err)
	}
	if _, err := controls.RunCounter(ctx, p, v, p.Counters[3], target, 1); err == nil || !strings.Contains(err.Error(), "answered 418, which the plan does not expect") {
		t.Fatalf("wrong answers gave %v", err)
	}
	// An SQL counter over a store DSN that does not parse is refused
	// without quoting it (pgx's own message can show part of a password
	// that holds an '@').
	for _, dsn := range pgdsntest.Unparsable("s3cret-pw") {
		bad := controls.Target{Name: "head", URL: app.URL, DSN: dsn}
		_, err := controls.RunCounter(ctx, p, v, p.Counters[4], bad, 1)
		pgdsntest.CheckRefusal(t, "the SQL counter", err, "s3cret-pw")
	}
}

// headStore is a database perf_head on the test binary's PostgreSQL
// server, its DSN, a connection to it, and a context that bounds the test.
func headStore(t *testing.T) (context.Context, string, *pgx.Conn) {
	t.Helper()
	srv := armdbtest.Start(t, "perf_head")
	dsn := srv.DSN("perf_head")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return ctx, dsn, conn
}
