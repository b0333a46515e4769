package loadrun

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// cacheServer answers every fourth request it serves as a cache hit, by
// all three signs at once (status 203, X-Cache: HIT, "cache":{"hit":true}),
// and counts what it served.
func cacheServer(t *testing.T) (url string, served, hits *atomic.Int64) {
	t.Helper()
	served, hits = new(atomic.Int64), new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hit := (served.Add(1)-1)%4 == 0
		w.Header().Set("Content-Type", "application/json")
		if hit {
			hits.Add(1)
			w.Header().Set("X-Cache", "HIT")
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
		} else {
			w.Header().Set("X-Cache", "MISS")
		}
		fmt.Fprintf(w, `{"cache":{"hit":%t}}`, hit)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, served, hits
}

// TestRunReportsHitRatio: perfgate load takes [load]'s hit keys, the ones
// [experiment] has, and says the hit ratio the server really served, in
// the summary and the JSON report, whichever way the plan names a hit.
func TestRunReportsHitRatio(t *testing.T) {
	for _, tc := range []struct{ name, keys, says string }{
		{"by header", `hit_header = "X-Cache: HIT"`, `by hit_header "X-Cache: HIT"`},
		{"by JSON field", `hit_field = "cache.hit"`, `by hit_field "cache.hit" = true`},
		{"by status", `hit_status = [203]`, `by hit_status [203]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each subtest has its own server and counts; what is
			// checked is what that server served, not how fast.
			t.Parallel()
			url, served, hits := cacheServer(t)
			plan := "[load]\nrate = 40\n" + tc.keys + "\n\n[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = [200, 203]\n"
			var out bytes.Buffer
			report := filepath.Join(t.TempDir(), "load.json")
			err := Run(context.Background(), Options{Plan: writePlan(t, plan), Target: url, Duration: time.Second,
				WarmupSet: true, Seed: 1, Out: report, Stdout: &out})
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			n, h := served.Load(), hits.Load()
			want := fmt.Sprintf("note: hit ratio of a: %.1f %% (%d of %d expected answers, %s)", 100*float64(h)/float64(n), h, n, tc.says)
			if !strings.Contains(out.String(), want) {
				t.Fatalf("summary lacks %q:\n%s", want, out.String())
			}
			// One in four is mostly misses, and said so.
			if !strings.Contains(out.String(), "; mostly misses") {
				t.Errorf("a 25 %% hit ratio is not called mostly misses:\n%s", out.String())
			}
			data, err := os.ReadFile(report)
			if err != nil {
				t.Fatal(err)
			}
			var rep struct{ Notes []string }
			if err := json.Unmarshal(data, &rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(rep.Notes, "\n"), strings.TrimPrefix(want, "note: ")) {
				t.Errorf("the report's notes %q lack the hit ratio", rep.Notes)
			}
		})
	}
	t.Run("no hit rule, no line", func(t *testing.T) {
		t.Parallel()
		url, _, _ := cacheServer(t)
		var out bytes.Buffer
		err := Run(context.Background(), Options{Plan: writePlan(t, "[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = [200, 203]\n"),
			Target: url, Rate: 20, Duration: time.Second, WarmupSet: true, Seed: 1, Stdout: &out})
		if err != nil || strings.Contains(out.String(), "hit ratio") {
			t.Fatalf("%v\n%s", err, out.String())
		}
	})
}

// TestRunHitRatioOfRightAnswers: hit_status counts the right answers with
// that status and no other. A target that answers one request in three
// with a 203 whose body is wrong has failed those: they are neither
// expected answers nor hits. Counting every 203 put the ratio at twice
// the truth, and the report's hits stayed empty beside it.
func TestRunHitRatioOfRightAnswers(t *testing.T) {
	t.Parallel()
	var served, hits, wrong atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch served.Add(1) % 3 {
		case 0:
			hits.Add(1)
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			fmt.Fprint(w, `{"ok":true}`)
		case 1:
			wrong.Add(1)
			w.WriteHeader(http.StatusNonAuthoritativeInfo)
			fmt.Fprint(w, `{"stale":true}`)
		default:
			fmt.Fprint(w, `{"ok":true}`)
		}
	}))
	t.Cleanup(srv.Close)
	plan := "[load]\nrate = 40\nhit_status = [203]\n\n[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = [200, 203]\nexpect_body = '\"ok\"'\n"
	var out bytes.Buffer
	report := filepath.Join(t.TempDir(), "load.json")
	err := Run(context.Background(), Options{Plan: writePlan(t, plan), Target: srv.URL, Duration: time.Second,
		WarmupSet: true, Seed: 1, Out: report, Stdout: &out})
	// The wrong answers fail the run (exit 1); the ratio is still said.
	if exit.Code(err) != exit.Regression {
		t.Fatalf("%v, want exit 1 for the wrong answers\n%s", err, out.String())
	}
	h, expected := hits.Load(), served.Load()-wrong.Load()
	want := fmt.Sprintf("note: hit ratio of a: %.1f %% (%d of %d expected answers, by hit_status [203])", 100*float64(h)/float64(expected), h, expected)
	if !strings.Contains(out.String(), want) {
		t.Fatalf("summary lacks %q:\n%s", want, out.String())
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Groups []struct{ Hits, Expected int64 }
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Hits != h || rep.Groups[0].Expected != expected {
		t.Errorf("report groups %+v, want hits %d of %d expected", rep.Groups, h, expected)
	}
}
