package exampleservice

import (
	"encoding/json"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestRoutes(t *testing.T) {
	r := run(t)
	tests := []struct {
		method, path, body string
		status             int
		ctype, want        string
	}{
		{"GET", "/hello", "", 200, "text/plain", "hello\n"},
		{"GET", "/items/42", "", 200, "application/json", `{"id":42,"name":"item-42"}` + "\n"},
		{"GET", "/items/x", "", 400, "application/json", "non-negative integer"},
		{"POST", "/items", `{"name": "widget"}`, 201, "application/json", `"name":"widget"`},
		{"POST", "/items", `not json`, 400, "application/json", "must be JSON"},
		{"GET", "/healthz", "", 200, "text/plain", "ok\n"},
		{"GET", "/nope", "", 404, "", ""},
		{"DELETE", "/hello", "", 405, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			a := r.do(t, tt.method, tt.path, tt.body)
			if a.status != tt.status {
				t.Fatalf("status %d, want %d (%s)", a.status, tt.status, a.body)
			}
			if !strings.HasPrefix(a.header.Get("Content-Type"), tt.ctype) || !strings.Contains(a.body, tt.want) {
				t.Fatalf("answer %q (%s), want %q (%s)", a.body, a.header.Get("Content-Type"), tt.want, tt.ctype)
			}
			if tt.ctype != "" {
				appDur(t, a)
			}
		})
	}
	var first, second item
	json.Unmarshal([]byte(r.do(t, "POST", "/items", "").body), &first)
	json.Unmarshal([]byte(r.do(t, "POST", "/items", "").body), &second)
	if second.ID != first.ID+1 || first.Name != "unnamed" {
		t.Fatalf("created %+v then %+v, want consecutive ids and the default name", first, second)
	}
}

func TestLatencyKnobs(t *testing.T) {
	tests := []struct {
		name     string
		knobs    []string
		min, max time.Duration // of the Server-Timing duration
	}{
		{"none", nil, 0, 5 * time.Millisecond},
		{"latency", []string{"--latency", "20ms"}, 20 * time.Millisecond, 60 * time.Millisecond},
		// 10 ms of natural time multiplied by 3.
		{"latency factor", []string{"--latency", "10ms", "--latency-factor", "3"}, 30 * time.Millisecond, 80 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.knobs...)
			// The median of a few, so one preempted request on the shared
			// machine does not decide.
			var durs []time.Duration
			for range 5 {
				a := r.do(t, "GET", "/hello", "")
				d := appDur(t, a)
				if a.took < d {
					t.Fatalf("the client saw %s, less than the service's %s", a.took, d)
				}
				durs = append(durs, d)
			}
			d := median(durs)
			if d < tt.min || d > tt.max {
				t.Fatalf("median Server-Timing %s (all %v), want %s..%s", d, durs, tt.min, tt.max)
			}
		})
	}
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s[len(s)/2]
}

// An override answers its exact path with its status, body unchanged,
// whichever route serves the path, none, or another method.
func TestStatusOverride(t *testing.T) {
	r := run(t, "--status-override", "/hello=503,/items/7=418", "--status-override", "/items=409",
		"--status-override", "/healthz=503,/calls=500,/nope=200")
	tests := []struct {
		method, path string
		want         int
		body         string
	}{
		{"GET", "/hello", 503, "hello\n"},
		{"DELETE", "/hello", 503, ""},
		{"GET", "/items/7", 418, `"name":"item-7"`},
		{"GET", "/items/8", 200, `"name":"item-8"`},
		{"POST", "/items", 409, `"name":"unnamed"`},
		{"GET", "/items", 409, ""},
		{"GET", "/healthz", 503, "ok\n"},
		{"GET", "/calls", 500, `{"exchanges":0}`},
		{"GET", "/nope", 200, "404 page not found"},
		{"GET", "/onward/1", 200, `{"id":"1"}`},
	}
	for _, tt := range tests {
		a := r.do(t, tt.method, tt.path, "")
		if a.status != tt.want || !strings.Contains(a.body, tt.body) {
			t.Errorf("%s %s: %d %q, want %d with %q", tt.method, tt.path, a.status, a.body, tt.want, tt.body)
		}
	}
}

func TestStall(t *testing.T) {
	t.Parallel()
	r := run(t, "--stall", "250ms", "--stall-every", "500ms")
	// Over 1.5 s at least two stalls open; a request arriving in one waits
	// for its end.
	var slow, fast int
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); {
		a := r.do(t, "GET", "/hello", "")
		if appDur(t, a) >= 20*time.Millisecond {
			slow++
		} else {
			fast++
		}
		time.Sleep(20 * time.Millisecond)
	}
	if slow == 0 || fast == 0 {
		t.Fatalf("%d slow and %d fast answers, want both: stalls are periodic", slow, fast)
	}
}

func TestReadyDelay(t *testing.T) {
	r := run(t, "--ready-delay", "400ms")
	if a := r.do(t, "GET", "/healthz", ""); a.status != http.StatusServiceUnavailable {
		t.Fatalf("/healthz right after start: %d, want 503", a.status)
	}
	time.Sleep(450 * time.Millisecond)
	if a := r.do(t, "GET", "/healthz", ""); a.status != http.StatusOK {
		t.Fatalf("/healthz after the delay: %d, want 200", a.status)
	}
}

func TestLeakGrowsHeap(t *testing.T) {
	r := run(t, "--leak", "1048576", "--alloc", "4194304")
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range 20 {
		r.do(t, "GET", "/hello", "")
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	// 20 leaked MiB stay after a GC; the 4 MiB per request do not add up.
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	if grew < 19<<20 || grew > 40<<20 {
		t.Fatalf("heap grew by %d MiB after 20 requests leaking 1 MiB each, want about 20", grew>>20)
	}
}

func TestStopsCleanly(t *testing.T) {
	r := run(t, "--idle-busy", "0.1", "--stall", "100ms", "--stall-every", "200ms")
	r.do(t, "GET", "/hello", "")
	start := time.Now()
	if err := r.stop(); err != nil {
		t.Fatalf("Main returned %v on a clean stop", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("stopping took %s", d)
	}
	if !strings.Contains(r.out.String(), "exampled: stopped") {
		t.Fatalf("no stop line in the output:\n%s", r.out)
	}
}
