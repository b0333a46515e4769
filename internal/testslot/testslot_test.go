package testslot

import (
	"context"
	"testing"
	"time"
)

// With every slot taken, Acquire waits; a release lets the next one in.
func TestSlotsLimitAndRelease(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // slots of this test's own
	t.Setenv("PERFGATE_TEST_GATE_SLOTS", "2")
	a := Hold(t)
	b := Hold(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx); err == nil {
		t.Fatal("a third slot was given while both were held")
	}
	a()
	ctx2, cancel2 := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel2()
	c, err := Acquire(ctx2)
	if err != nil {
		t.Fatalf("no slot after one was released: %v", err)
	}
	c()
	b()
}
