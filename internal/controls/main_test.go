package controls_test

import (
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
	"github.com/perfgate/perfgate/internal/exampleservice"
)

// exampled is the example service, built once for the package's tests.
var exampled string

func TestMain(m *testing.M) { os.Exit(exampleservice.RunTests(armdbtest.Tests(m), &exampled)) }
