package testslot

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
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

// HoldAll waits for every slot, and while it holds them no other gate
// gets one.
func TestHoldAllTakesEverySlot(t *testing.T) {
	testtier.Heavy(t, testtier.Gate) // HoldAll skips in the short tier, from its goroutine
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("PERFGATE_TEST_GATE_SLOTS", "2")
	other, err := Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() { got <- HoldAll(&named{TB: t, name: "TestMeasuredAlone"}) }()
	select {
	case <-got:
		t.Fatal("HoldAll returned while another gate held a slot")
	case <-time.After(300 * time.Millisecond):
	}
	other()
	var release func()
	select {
	case release = <-got:
	case <-time.After(time.Minute):
		t.Fatal("HoldAll never took the freed slot")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Acquire(ctx); err == nil {
		t.Error("a slot was given while HoldAll held them all")
	}
	release()
	if free, err := Acquire(context.Background()); err != nil {
		t.Errorf("no slot after HoldAll's release: %v", err)
	} else {
		free()
	}
}

// A long hold waiting is served first: with the one slot held and both a
// long and a plain waiter at it, the release lets the long one in, and
// the plain one only after the long one's release.
func TestLongHoldIsServedFirst(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	t.Setenv("PERFGATE_TEST_GATE_SLOTS", "1")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	first, err := Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		who     string
		release func()
		err     error
	}
	order := make(chan got, 2)
	go func() { r, err := Acquire(ctx); order <- got{"plain", r, err} }()
	// The plain waiter polls first; the long one comes after it.
	time.Sleep(300 * time.Millisecond)
	go func() { r, err := AcquireLong(ctx, ""); order <- got{"long", r, err} }()
	for !longWaiting() {
		time.Sleep(10 * time.Millisecond)
	}
	first()
	a := <-order
	if a.err != nil || a.who != "long" {
		t.Fatalf("first served after the release: %s (%v), want the long hold", a.who, a.err)
	}
	if longWaiting() {
		t.Error("the long hold got its slot and still counts as waiting")
	}
	select {
	case b := <-order:
		t.Fatalf("%s got a slot while the long hold held the only one", b.who)
	case <-time.After(300 * time.Millisecond):
	}
	a.release()
	b := <-order
	if b.err != nil || b.who != "plain" {
		t.Fatalf("then: %s (%v), want the plain waiter", b.who, b.err)
	}
	b.release()
}

// A long waiter that died (its file left, its lock gone with it) keeps no
// one waiting.
func TestDeadLongWaiterCountsForNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if err := os.WriteFile(filepath.Join(dir, longPrefix+"1-1.lock"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if longWaiting() {
		t.Fatal("an unlocked waiting file counts as a long hold waiting")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	release, err := Acquire(ctx)
	if err != nil {
		t.Fatalf("a dead long waiter kept the slot from a plain one: %v", err)
	}
	release()
}

// Each release appends the test's name, wait, hold and release time to
// LogEnv's file, one line per hold, so .ci/test can say whose
// slot-seconds a measured phase spent and how long its slots sat free.
func TestHoldsAreLogged(t *testing.T) {
	testtier.Heavy(t, testtier.Gate) // Hold skips in the short tier
	t.Setenv("TMPDIR", t.TempDir())
	log := filepath.Join(t.TempDir(), "slots.log")
	t.Setenv(LogEnv, log)
	for _, name := range []string{"TestMeasuredOne", "TestMeasuredTwo/sub"} {
		release := Hold(&named{TB: t, name: name})
		time.Sleep(20 * time.Millisecond)
		release()
		release() // a second call records nothing more
	}
	// A chain's hold, taken with AcquireLong outside Hold, by its name.
	release, err := AcquireLong(context.Background(), "TestMeasuredThree/chain")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	release()
	release()
	Retry(&named{TB: t, name: "TestMeasuredThree"}, "perfgate: regression: p50.create: the head is worse\tby 12 %\nmore lines")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d lines logged, want 4:\n%s", len(lines), b)
	}
	if want := "TestMeasuredThree\tagain\tperfgate: regression: p50.create: the head is worse by 12 %"; lines[3] != want {
		t.Errorf("the retry's line is %q, want %q: its first line, its tabs made spaces", lines[3], want)
	}
	lines = lines[:3]
	for i, want := range []string{"TestMeasuredOne", "TestMeasuredTwo/sub", "TestMeasuredThree/chain"} {
		f := strings.Split(lines[i], "\t")
		if len(f) != 4 || f[0] != want {
			t.Errorf("line %d: %q, want %s, its wait, its hold and its release time, tab-separated", i, lines[i], want)
			continue
		}
		if held, err := strconv.ParseFloat(f[2], 64); err != nil || held <= 0 {
			t.Errorf("line %d: held %q, want seconds over 0", i, f[2])
		}
		if at, err := strconv.ParseFloat(f[3], 64); err != nil || math.Abs(at-float64(time.Now().Unix())) > 60 {
			t.Errorf("line %d: released at %q, want Unix seconds of the last minute", i, f[3])
		}
	}
}
