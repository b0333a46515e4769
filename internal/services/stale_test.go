package services

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// Only a run of this checkout whose owner is gone is swept: not a live
// run, not another checkout's, not one started to outlive its starter.
func TestDownStaleTouchesOnlyDeadRunsOfTheCheckout(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	ctx := context.Background()
	n := time.Now().UnixNano()
	checkout, other := fmt.Sprintf("/runner/work/app-%d", n), fmt.Sprintf("/runner/work2/app-%d", n)
	runs := []struct {
		id, checkout, owner string
		swept               bool
	}{
		{fmt.Sprintf("dead%d", n), checkout, "dead", true},
		{fmt.Sprintf("live%d", n), checkout, "live", false},
		{fmt.Sprintf("other%d", n), other, "dead", false},
		{fmt.Sprintf("unowned%d", n), checkout, "", false},
	}
	for _, r := range runs {
		t.Cleanup(func() {
			if err := DownByLabel(ctx, r.id); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		})
		labels := []string{"--label", RunLabel + "=" + r.id, "--label", CheckoutLabel + "=" + r.checkout}
		if r.owner != "" {
			labels = append(labels, "--label", OwnerLabel+"="+r.owner)
		}
		if _, err := docker(ctx, append(append([]string{"network", "create"}, labels...), r.id+"_default")...); err != nil {
			t.Fatal(err)
		}
		if _, err := docker(ctx, append(append([]string{"volume", "create"}, labels...), r.id+"_data")...); err != nil {
			t.Fatal(err)
		}
	}
	gone := func(owner string) bool { return owner == "dead" }
	stale, err := DownStale(ctx, checkout, gone)
	if err != nil {
		t.Fatalf("DownStale: %v", err)
	}
	var swept []string
	for _, s := range stale {
		swept = append(swept, s.RunID)
		if len(s.What) != 2 {
			t.Errorf("stale run %s: %v, want its network and volume", s.RunID, s.What)
		}
	}
	if want := []string{runs[0].id}; !reflect.DeepEqual(swept, want) {
		t.Errorf("swept %v, want %v", swept, want)
	}
	for _, r := range runs {
		left, err := Leftovers(ctx, r.id)
		if err != nil {
			t.Fatal(err)
		}
		if r.swept && len(left) > 0 {
			t.Errorf("run %s was to be swept; left %v", r.id, left)
		}
		if !r.swept && len(left) != 2 {
			t.Errorf("run %s was not to be touched; left %v", r.id, left)
		}
	}
}
