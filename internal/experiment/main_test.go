package experiment_test

import (
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/testtier"
)

// The short tier's parallel tests wait on their in-process targets'
// phases (open-loop load for a few seconds each, half a core at most),
// not on the CPU: four at a time, not two. The measured knees, which need
// the machine, are serial and not in the short tier.
func TestMain(m *testing.M) {
	testtier.Waiting(4)
	os.Exit(m.Run())
}
