package target_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/experiment/target"
	"github.com/perfgate/perfgate/internal/experiment/target/targettest"
)

func get(t *testing.T, url string) (int, string, http.Header) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// burst sends n requests at once and counts the answers by status.
func burst(t *testing.T, url string, n int) map[int]int {
	t.Helper()
	var mu sync.Mutex
	got := map[int]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, _, _ := get(t, url)
			mu.Lock()
			got[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

func TestCapacityTarget(t *testing.T) {
	if _, err := target.New(target.Config{Workers: 0, Service: time.Millisecond}); err == nil || !strings.Contains(err.Error(), "--workers 4 --service 20ms") {
		t.Errorf("no workers: %v", err)
	}
	for _, tc := range []struct {
		name string
		cfg  target.Config
		n    int
		want map[int]int
	}{
		// 2 served at once, 2 waiting, the other 4 shed at once.
		{"queue limit", target.Config{Workers: 2, Service: 300 * time.Millisecond, Queue: 2}, 8, map[int]int{200: 4, 503: 4}},
		// Past 3 inside, every arrival fails.
		{"fail above", target.Config{Workers: 8, Service: 300 * time.Millisecond, FailAbove: 3}, 6, map[int]int{200: 3, 503: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := targettest.Start(t, tc.cfg)
			got := burst(t, url+"/work", tc.n)
			if got[200] != tc.want[200] || got[503] != tc.want[503] {
				t.Errorf("answers %v, want %v", got, tc.want)
			}
			_, metrics, _ := get(t, url+"/metrics")
			if !strings.Contains(metrics, "# TYPE capacity_pool_wait_seconds gauge\ncapacity_pool_wait_seconds ") ||
				!strings.Contains(metrics, "capacity_shed_total "+strconv.Itoa(tc.want[503])+"\n") {
				t.Errorf("metrics:\n%s", metrics)
			}
		})
	}
	url := targettest.Start(t, target.Config{Workers: 1, Service: 20 * time.Millisecond})
	code, _, h := get(t, url+"/x")
	dur, err := strconv.ParseFloat(strings.TrimPrefix(h.Get("Server-Timing"), "total;dur="), 64)
	if code != 200 || err != nil || dur < 20 || dur > 200 {
		t.Errorf("status %d, Server-Timing %q: want 200 and about 20 ms", code, h.Get("Server-Timing"))
	}
	if c := (target.Config{Workers: 4, Service: 50 * time.Millisecond}).Capacity(); c != 80 {
		t.Errorf("capacity %g, want 80", c)
	}
}
