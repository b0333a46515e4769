package contract_test

import (
	"path/filepath"
	"testing"

	"github.com/perfgate/perfgate/internal/contract"
)

// The target folder's layout is what docs/contract.md and docs/action.md
// name: perf-base/, perf-head/ and perf-run/ under target/.
func TestTargetLayout(t *testing.T) {
	tg := contract.Target(contract.DefaultTarget)
	for _, tc := range []struct{ got, want string }{
		{tg.Base(), "target/perf-base"},
		{tg.Head(), "target/perf-head"},
		{tg.BaseNote(), "target/perf-base/base.md"},
		{tg.BaseTree(), "target/perf-base/tree"},
		{string(tg.Run()), "target/perf-run"},
		{tg.Run().Arm("variant"), "target/perf-run/variant"},
		{tg.Run().Services(), "target/perf-run/services"},
		{contract.RunDir("/tmp/out").Arm("base"), "/tmp/out/base"},
	} {
		if tc.got != filepath.FromSlash(tc.want) {
			t.Errorf("got %s, want %s", tc.got, tc.want)
		}
	}
}
