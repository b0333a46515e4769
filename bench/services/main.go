// Command services measures the compose diff on a generated project:
// `go run ./bench/services -n 200` prints each run and the median, the
// figure the goal (under 1 s for 200 services) is read against.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/services/servicetest"
)

func main() {
	n := flag.Int("n", 200, "services in the generated project")
	runs := flag.Int("runs", 5, "diffs to time")
	flag.Parse()
	if err := run(*n, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "bench/services:", err)
		os.Exit(2)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(n, runs int) error {
	tmp, err := os.MkdirTemp("", "perfgate-bench-services-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	trees := map[string]services.Tree{}
	for _, arm := range []string{"head", "base"} {
		dir := filepath.Join(tmp, arm)
		for name, body := range servicetest.Generated(n, arm) {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				return err
			}
		}
		trees[arm] = services.Tree{Dir: dir, Files: []string{"compose.yaml"}, Project: "bench"}
	}
	var took []time.Duration
	for i := 0; i < runs; i++ {
		cpu0 := cpuTime()
		start := time.Now()
		p, err := services.Diff(context.Background(), trees["head"], trees["base"])
		if err != nil {
			return err
		}
		d := time.Since(start)
		took = append(took, d)
		// CPU time beside wall time: on a shared runner the wall time
		// mostly measures the other jobs.
		fmt.Printf("run %d: diff of %d services (%d groups) %s wall, %s CPU\n", i+1, n, len(p.Groups), d.Round(time.Millisecond), (cpuTime() - cpu0).Round(time.Millisecond))
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	fmt.Printf("median diff of %d services: %s (goal under 1 s)\n", n, took[len(took)/2].Round(time.Millisecond))
	return nil
}
