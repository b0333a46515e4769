package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"
)

// vegetaReport is the part of `vegeta report -type=json` the benchmarks read.
type vegetaReport struct {
	Requests   uint64  `json:"requests"`
	Rate       float64 `json:"rate"`
	Throughput float64 `json:"throughput"`
	Success    float64 `json:"success"`
	Latencies  struct {
		P50 int64 `json:"50th"`
		P90 int64 `json:"90th"`
		P99 int64 `json:"99th"`
		Max int64 `json:"max"`
	} `json:"latencies"`
}

// vegeta runs `vegeta attack` pinned (rate 0 = flat out with maxWorkers)
// and reads its report afterwards, unpinned and untimed.
func vegeta(ctx context.Context, target string, rate int, dur time.Duration, maxWorkers int) (vegetaReport, measured, error) {
	dir, err := os.MkdirTemp("", "perfgate-bench-vegeta")
	if err != nil {
		return vegetaReport{}, measured{}, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "results.bin")
	args := []string{"attack", "-rate=" + strconv.Itoa(rate), "-duration=" + dur.String(), "-output=" + bin}
	if maxWorkers > 0 {
		args = append(args, "-max-workers="+strconv.Itoa(maxWorkers), "-workers="+strconv.Itoa(maxWorkers))
	}
	m, err := pinned(ctx, "GET "+target+"/\n", vegetaPath(), args...)
	if err != nil {
		return vegetaReport{}, m, err
	}
	out, err := execOutput(ctx, vegetaPath(), "report", "-type=json", bin)
	if err != nil {
		return vegetaReport{}, m, err
	}
	var r vegetaReport
	if err := json.Unmarshal(out, &r); err != nil {
		return r, m, fmt.Errorf("reading vegeta's report: %w", err)
	}
	return r, m, nil
}

var reqPerSec = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)

func wrk(ctx context.Context, target string, conns int, dur time.Duration) (float64, measured, error) {
	m, err := pinned(ctx, "", "wrk", "-t1", "-c"+strconv.Itoa(conns), "-d"+dur.String(), target+"/")
	if err != nil {
		return 0, m, err
	}
	return parseRate(m.out, "wrk")
}

func hey(ctx context.Context, target string, args ...string) (measured, error) {
	return pinned(ctx, "", "hey", append(args, target+"/")...)
}

func parseRate(out []byte, tool string) (float64, measured, error) {
	mm := reqPerSec.FindSubmatch(out)
	if mm == nil {
		return 0, measured{}, fmt.Errorf("no Requests/sec in %s's output:\n%s", tool, out)
	}
	v, err := strconv.ParseFloat(string(mm[1]), 64)
	return v, measured{}, err
}

// heyPercentile reads "  90% in 0.2001 secs" from hey's latency distribution.
func heyPercentile(out []byte, p int) (float64, error) {
	re := regexp.MustCompile(fmt.Sprintf(`\s%d%%+ in ([0-9.]+) secs`, p))
	mm := re.FindSubmatch(out)
	if mm == nil {
		return 0, fmt.Errorf("no p%d in hey's output:\n%s", p, out)
	}
	v, err := strconv.ParseFloat(string(mm[1]), 64)
	return v * 1000, err
}
