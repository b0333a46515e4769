package controls_test

import (
	"os"
	"testing"

	exampleservice "github.com/perfgate/perfgate/examples/service"
	"github.com/perfgate/perfgate/internal/armdb/armdbtest"
)

// exampled is the example service, built once for the package's tests.
var exampled string

func TestMain(m *testing.M) { os.Exit(exampleservice.RunTests(armdbtest.Tests(m), &exampled)) }
