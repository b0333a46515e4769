package demo

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

// The settings a dependency answers become the service's flags; an answer
// over the bound is refused at once, never read cut short (its last line
// would be a knob with a truncated value).
func TestServiceArgsReadsTheSettings(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
		err        string
	}{
		{"knobs", "# a comment\nalloc=4096\n\n latency = 2ms \n", []string{"--alloc=4096", "--latency=2ms"}, ""},
		{"not knob=value", "alloc\n", nil, `settings line 1: "alloc" is not knob=value`},
		{"over the bound", strings.Repeat("# padding\n", maxSettings/10) + "alloc=4096\n", nil, "more settings than the service reads (64 KiB)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte(tt.body))
			}))
			t.Cleanup(srv.Close)
			// The product's wait: an answer refused is not retried, so
			// the refusal comes at once, not after it.
			start := time.Now()
			got, err := ServiceArgs(context.Background(), ServiceConfig{SettingsURL: srv.URL + "/settings"}, 30*time.Second)
			t.Logf("ServiceArgs answered in %s", time.Since(start).Round(time.Millisecond))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ServiceArgs = %q, %v; want an error containing %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ServiceArgs = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
