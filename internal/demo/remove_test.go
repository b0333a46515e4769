package demo

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A folder another process still writes into for a moment is removed
// once the writing stops, within the limit; one that is never freed
// gives the last error.
func TestRemoveSettled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "repo")
	sub := filepath.Join(dir, ".git", "objects")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	stop := time.Now().Add(500 * time.Millisecond)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; time.Now().Before(stop); i++ {
			_ = os.MkdirAll(sub, 0o755)
			_ = os.WriteFile(filepath.Join(sub, strconv.Itoa(i)), nil, 0o644)
		}
	}()
	err := removeSettled(dir, 10*time.Second)
	<-done
	if err != nil {
		t.Fatalf("removeSettled: %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		// The writer's last MkdirAll may land after the last removal;
		// what matters is that removeSettled itself did not fail.
		t.Logf("the writer made the folder again after the removal: %v", err)
	}
	locked := filepath.Join(t.TempDir(), "locked")
	if err := os.MkdirAll(filepath.Join(locked, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		return // root removes from a read-only folder
	}
	if err := os.Chmod(locked, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o755) })
	if err := removeSettled(filepath.Join(locked, "in"), 300*time.Millisecond); err == nil {
		t.Error("removing from a read-only folder did not fail")
	}
}
