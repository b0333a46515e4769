package services

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Monitoring services mount the runner's /proc, /sys and /dev, and some
// mount /usr: folders that are the runner's, not the change's. Walking
// them hung the plan for over 90 s on /proc and took 31 s on /usr.
func TestDiffComparesHostPathsByPath(t *testing.T) {
	const mounts = `
services:
  exporter:
    image: node-exporter:1
    volumes:
      - /proc:/host/proc:ro
      - /sys:/host/sys:ro
      - /dev:/host/dev:ro
      - /usr:/host/usr:ro
      - ./link-to-proc:/host/linked:ro
      - ./conf/exporter.yml:/etc/exporter.yml:ro
`
	files := map[string]string{"compose.yaml": mounts, "conf/exporter.yml": "scrape: 1s\n"}
	cases := []struct {
		name     string
		base     map[string]string
		copied   []string
		why      string
		byPath   []string
		linkBase string
	}{
		{"the same host paths are shared", files, nil, "identical",
			[]string{"/dev", "/proc", "/sys", "/usr"}, "/proc"},
		// Inside the tree content still decides.
		{"a changed file of the tree still copies", with(files, map[string]string{"conf/exporter.yml": "scrape: 5s\n"}),
			[]string{"exporter"}, "exporter: mounted conf/exporter.yml content differs",
			[]string{"/dev", "/proc", "/sys", "/usr"}, "/proc"},
		{"another host path copies", with(files, map[string]string{"compose.yaml": strings.Replace(mounts, "/usr:/host/usr", "/opt:/host/usr", 1)}),
			[]string{"exporter"}, `exporter: volumes[3].source differs (head "/usr", base "/opt")`,
			[]string{"/dev", "/opt", "/proc", "/sys", "/usr"}, "/proc"},
		// A link of the tree that leads out of it is a host path too.
		{"a link out of the tree is compared by where it leads", files,
			[]string{"exporter"}, "exporter: mounted link-to-proc leads to /proc in the head, /sys in the base",
			[]string{"/dev", "/proc", "/sys", "/usr"}, "/sys"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := writeTree(t, files)
			base := writeTree(t, c.base)
			for _, tr := range []struct{ dir, to string }{{head.Dir, "/proc"}, {base.Dir, c.linkBase}} {
				if err := os.Symlink(tr.to, filepath.Join(tr.dir, "link-to-proc")); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			p, err := Diff(ctx, head, base)
			if err != nil {
				t.Fatalf("Diff: %v (after %s)", err, time.Since(start))
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("Diff took %s: it read host folders", took)
			}
			if got := copiedOf(p); !reflect.DeepEqual(got, c.copied) {
				t.Errorf("copied %v, want %v (plan %+v)", got, c.copied, p.Groups)
			}
			if len(p.Groups) != 1 {
				t.Fatalf("groups %+v, want one", p.Groups)
			}
			g := p.Groups[0]
			if g.Why != c.why {
				t.Errorf("why = %q, want %q", g.Why, c.why)
			}
			if !reflect.DeepEqual(g.ByPath, c.byPath) {
				t.Errorf("compared by path: %v, want %v", g.ByPath, c.byPath)
			}
		})
	}
}

// A walk the caller stopped waiting for ends: Diff returns the context's
// error instead of hashing on.
func TestDiffStopsHashingWhenCancelled(t *testing.T) {
	big := map[string]string{"compose.yaml": "services:\n  a:\n    image: x\n    volumes: [\"./data:/data\"]\n"}
	for i := 0; i < 2000; i++ {
		big[filepath.Join("data", "d"+string(rune('a'+i%26)), strings.Repeat("f", 1+i%40)+".txt")] = strings.Repeat("x", 100)
	}
	head := writeTree(t, big)
	base := writeTree(t, big)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Diff(ctx, head, base); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("Diff on a cancelled context: %v, want context canceled", err)
	}
}
