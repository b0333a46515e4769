package actiontest

import (
	"os"
	"testing"
)

// shared is a folder for what tests of this process share (the wftool
// binary, where internal/testbin's folder of the checkout cannot be
// made); it is removed when they end.
var shared string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "perfgate-actiontest-")
	if err != nil {
		panic(err)
	}
	shared = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
