package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestExampleServiceServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- RunIO(ctx, []string{"example-service", "--addr", "127.0.0.1:0", "--latency", "1ms"}, &IO{Out: out, Err: out})
	}()
	re := regexp.MustCompile(`listening on (http://\S+)`)
	var url string
	for deadline := time.Now().Add(time.Minute); url == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			cancel()
			t.Fatalf("perfgate example-service never listened:\n%s", out)
		} else {
			time.Sleep(10 * time.Millisecond)
		}
	}
	resp, err := http.Get(url + "/hello")
	if err != nil {
		t.Fatalf("GET /hello: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Server-Timing"), "app;dur=") {
		t.Fatalf("GET /hello: %s, Server-Timing %q", resp.Status, resp.Header.Get("Server-Timing"))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("example-service ended with %v after its context ended", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("example-service did not stop when its context ended")
	}
}

func TestExampleServiceRefusesBadKnobs(t *testing.T) {
	var out, errOut bytes.Buffer
	err := RunIO(context.Background(), []string{"example-service", "--latency-factor", "0.5"}, &IO{Out: &out, Err: &errOut})
	if exit.Code(err) != exit.CannotJudge || !strings.Contains(errOut.String(), "--latency-factor 0.5 is below 1") {
		t.Fatalf("exit %d, stderr %q: want exit 2 naming the knob", exit.Code(err), errOut.String())
	}
}

func TestExampleServiceIsHidden(t *testing.T) {
	var out bytes.Buffer
	RunIO(context.Background(), []string{"help"}, &IO{Out: &out, Err: &out})
	if strings.Contains(out.String(), "example-service") {
		t.Fatalf("help lists the hidden example-service:\n%s", out.String())
	}
}
