package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/load"
)

// bodyGroups is a plan of n groups that all send one body file.
func bodyGroups(n int, name, file string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "[[group]]\nname = \"%s%d\"\nmethod = \"POST\"\npath = \"/p\"\nbody_file = %q\nexpect = 200\n", name, i, file)
	}
	return b.String()
}

// TestBodyFileSharedBetweenGroups: 20 groups naming one 50 MB file took
// 4.17 GB. The file is now read once and its bytes shared: by every group
// of the plan, and by every request of the source, so parsing the plan and
// making its source allocate about one copy for the plan and one for the
// requests, whatever the number of groups.
func TestBodyFileSharedBetweenGroups(t *testing.T) {
	dir := planDir(t, 10)
	const size = 8 << 20
	body := strings.Repeat(`{"k": "v", "n": [1, 2, 3]}`+"\n", size/27)
	writeFile(t, filepath.Join(dir, "big.json"), body)
	src := bodyGroups(20, "g", "big.json")

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p, err := Parse("plan.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := p.Source(nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	t.Logf("allocated %.2fx the body", float64(after.TotalAlloc-before.TotalAlloc)/float64(len(body)))
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 3*uint64(len(body)) {
		t.Errorf("parsing 20 groups of one %d-byte body allocated %d bytes (%.1fx the body)", len(body), alloc, float64(alloc)/float64(len(body)))
	}
	for i, g := range p.Groups {
		if g.Body != body || unsafe.StringData(g.Body) != unsafe.StringData(p.Groups[0].Body) {
			t.Fatalf("group %d holds its own copy of the body", i)
		}
	}
	first := s.Next(load.Measured)
	for i := 1; i < 20; i++ {
		r := s.Next(load.Measured)
		if string(r.Body) != body || &r.Body[0] != &first.Body[0] {
			t.Fatalf("request %d holds its own copy of the body", i)
		}
	}
}

// TestBodyFileLimit: a body over MaxBodyBytes is refused with the usual
// one-line message naming the plan's line, and without reading the file.
func TestBodyFileLimit(t *testing.T) {
	dir := planDir(t, 10)
	f, err := os.Create(filepath.Join(dir, "huge.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxBodyBytes + 1); err != nil { // sparse: no disk written
		t.Fatal(err)
	}
	f.Close()
	writeFile(t, filepath.Join(dir, "ok.json"), "{}")
	_, err = Parse("plan.toml", []byte(bodyGroups(1, "ok", "ok.json")+bodyGroups(1, "huge", "huge.json")))
	if err == nil || exit.Code(err) != exit.CannotJudge {
		t.Fatalf("a body of %d bytes: %v", MaxBodyBytes+1, err)
	}
	want := fmt.Sprintf("plan.toml:11: body file huge.json holds %d bytes, over the 16 MiB limit of a request body; send a smaller body (perfgate holds each body in memory for the run)", MaxBodyBytes+1)
	if err.Error() != want {
		t.Fatalf("refusal\n got %s\nwant %s", err, want)
	}
	if !refusalShape.MatchString(err.Error()) {
		t.Fatalf("not one FILE:LINE: line: %q", err)
	}
}
