package hostiletest_test

import (
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/testtier"
)

// The hostile and endless targets' cases wait on timeouts and cancels,
// not on the CPU: eight at a time, not two.
func TestMain(m *testing.M) {
	testtier.Waiting(8)
	os.Exit(m.Run())
}
