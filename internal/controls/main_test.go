package controls_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	exampleservice "github.com/perfgate/perfgate/examples/service"
)

// exampled is the example service, built once for the package's tests.
var exampled string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "perfgate-controls-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	exampled, err = exampleservice.Build(context.Background(), dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(2)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
