package testslot

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// With every slot taken, Acquire waits; a release lets the next one in.
func TestSlotsLimitAndRelease(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // slots of this test's own
	t.Setenv("PERFGATE_TEST_GATE_SLOTS", "2")
	take := func() func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		release, err := Acquire(ctx)
		if err != nil {
			t.Fatalf("no slot: %v", err)
		}
		return release
	}
	a := take()
	b := take()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx); err == nil {
		t.Fatal("a third slot was given while both were held")
	}
	a()
	c := take()
	c()
	b()
}

// named is a test under another name, whose Fatalf is recorded.
type named struct {
	testing.TB
	name  string
	fatal string
}

func (n *named) Name() string { return n.name }
func (n *named) Fatalf(format string, args ...any) {
	n.fatal = fmt.Sprintf(format, args...)
}

// Hold refuses a test whose name .ci/test would not run apart with the
// measured ones, and takes a slot for one that it would.
func TestHoldWantsTheMeasuredName(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	wrong := &named{TB: t, name: "TestAAPasses"}
	Hold(wrong)()
	if !strings.Contains(wrong.fatal, "does not start with TestMeasured") {
		t.Errorf("Hold under the name TestAAPasses: %q, want a refusal naming the prefix", wrong.fatal)
	}
	right := &named{TB: t, name: "TestMeasuredAAPasses/attempt"}
	Hold(right)()
	if right.fatal != "" {
		t.Errorf("Hold under a measured name refused: %q", right.fatal)
	}
}
