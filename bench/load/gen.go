package main

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

type oneRequest struct{}

func (oneRequest) Next(load.Stage) load.Request { return load.Request{Method: "GET", Path: "/"} }

// runGen is perfgate's engine as a process of its own, so it can be pinned
// and its CPU time read like a peer's.
func runGen(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	target := fs.String("target", "", "")
	rate := fs.Float64("rate", 1000, "")
	dur := fs.Duration("duration", 5*time.Second, "")
	warm := fs.Duration("warmup", 0, "")
	conns := fs.Int("conns", 0, "")
	maxLate := fs.Duration("max-late", 0, "")
	memory := fs.Bool("memory", false, "sample RSS after 100k and 1M requests")
	profile := fs.String("cpuprofile", "", "write a CPU profile here")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	var out genResult
	a := load.Attack{Target: *target, Source: oneRequest{}, Groups: []load.Group{{Name: "get", Expect: []int{200}}},
		Pacer: load.ConstantPacer{Freq: *rate}, Warmup: *warm, Duration: *dur, MaxConns: *conns, MaxLateness: *maxLate}
	if *memory {
		a.Progress = func(s load.Snapshot) {
			if s.Done >= 100_000 && out.RSS100k == 0 {
				out.RSS100k = rssKiB()
			}
			if s.Done >= 1_000_000 && out.RSS1M == 0 {
				out.RSS1M = rssKiB()
			}
		}
	}
	r, err := load.Run(ctx, a)
	if err != nil {
		return err
	}
	s, g := r.Schedule, r.Total()
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	out.Intended, out.Sent, out.Dropped, out.Late = s.Intended, s.Sent, s.Dropped, s.Late
	out.Offered, out.Achieved = s.Offered, s.Achieved
	out.Requests, out.Expected, out.Errors = g.Requests, g.Expected, g.Errors
	out.P50, out.P90, out.P99, out.Max = ms(g.Percentile(50)), ms(g.Percentile(90)), ms(g.Percentile(99)), ms(g.Percentile(100))
	out.LateP50, out.LateP99 = ms(load.NearestRank(s.Lateness, 50)), ms(load.NearestRank(s.Lateness, 99))
	if *memory && out.RSS1M == 0 {
		out.RSS1M = rssKiB()
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}
