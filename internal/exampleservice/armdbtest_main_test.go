package exampleservice

import (
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
)

// The package's PostgreSQL tests share one server (armdbtest), stopped
// after the last test.
func TestMain(m *testing.M) { os.Exit(armdbtest.Main(m)) }
