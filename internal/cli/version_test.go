package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersion(t *testing.T) {
	built := func(v string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) { return &debug.BuildInfo{Main: debug.Module{Version: v}}, true }
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name, stamped string
		info          func() (*debug.BuildInfo, bool)
		want          string
	}{
		{"stamped by -ldflags -X", "v1.2.3", built("v1.0.0"), "v1.2.3"},
		{"go install of a tag", "dev", built("v1.4.0"), "v1.4.0"},
		{"a checkout's build", "dev", built("(devel)"), "dev"},
		{"no build info", "dev", none, "dev"},
	}
	for _, tc := range tests {
		if got := version(tc.stamped, tc.info); got != tc.want {
			t.Errorf("%s: version = %q, want %q", tc.name, got, tc.want)
		}
	}
}
