package exampleservice

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is an io.Writer the service and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// running is a service started by a test.
type running struct {
	url    string
	out    *syncBuffer
	stop   func() error // cancels Main and returns what it returned
	client *http.Client
}

// run starts Main in this process on a free loopback port; the service is
// stopped when the test ends.
func run(t *testing.T, knobs ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	errc := make(chan error, 1)
	go func() { errc <- Main(ctx, append([]string{"--addr", "127.0.0.1:0"}, knobs...), out, out) }()
	var once sync.Once
	var mainErr error
	stop := func() error {
		once.Do(func() { cancel(); mainErr = <-errc })
		return mainErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("the service ended with: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if m := listening.FindStringSubmatch(out.String()); m != nil {
			return &running{url: m[1], out: out, stop: stop, client: &http.Client{Timeout: 10 * time.Second}}
		}
		select {
		case err := <-errc:
			errc <- err
			t.Fatalf("the service exited at start: %v\n%s", err, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the service never said it was listening:\n%s", out)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

type answer struct {
	status int
	header http.Header
	body   string
	took   time.Duration
}

func (r *running) do(t *testing.T, method, path, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, r.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatalf("making %s %s: %v", method, path, err)
	}
	start := time.Now()
	resp, err := r.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the answer to %s %s: %v", method, path, err)
	}
	return answer{resp.StatusCode, resp.Header, string(b), time.Since(start)}
}

var serverTiming = regexp.MustCompile(`^app;dur=(\d+\.\d{3})$`)

// appDur is the Server-Timing duration the service reported.
func appDur(t *testing.T, a answer) time.Duration {
	t.Helper()
	m := serverTiming.FindStringSubmatch(a.header.Get("Server-Timing"))
	if m == nil {
		t.Fatalf("Server-Timing %q, want app;dur=<ms>", a.header.Get("Server-Timing"))
	}
	ms, _ := strconv.ParseFloat(m[1], 64)
	return time.Duration(ms * float64(time.Millisecond))
}
