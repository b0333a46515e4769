package db_test

import (
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/store/storetest"
)

// The package's PostgreSQL tests share one server (storetest), stopped
// after the last test.
func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }
