package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/report/reporttest"
)

// reportSize is the ingested report's size, a large gate's JSON report.
const reportSize = 100_000

// ingestBody is POST /v1/attempts' body with a gate's report padded with
// notes to reportSize; {runs} becomes a fresh run id per request (and the
// tail of the head SHA, so every run's commit differs).
func ingestBody() ([]byte, error) {
	r := reporttest.Pass()
	note := "a note padding the report to the size of a large plan's report, as a gate with many request groups writes it. "
	for i := 0; ; i++ {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if len(b) >= reportSize {
			body := fmt.Sprintf(`{"facts":{"repository":"acme/bench","event":"push","head_sha":"%s{runs}","run_id":{runs},"run_attempt":1,"attempt":1,"cpu_model":"bench CPU","exit_code":0},"report":%s}`,
				strings.Repeat("0", 30), b)
			return []byte(body), nil
		}
		r.Verdict.Notes = append(r.Verdict.Notes, fmt.Sprintf("%s(%d)", note, i))
	}
}

// values is how many distinct run ids a step at rate needs, warm-up and
// measured window both fresh (the plan keeps a fifth for the warm-up).
func values(rate float64, d, warmup time.Duration) int {
	need := rate * (d + warmup).Seconds() * 1.3
	return int(math.Ceil(need/0.8)) + 10
}

func writeLines(path string, from, n int, format func(int) string) error {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(format(from + i))
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func ingestStep(ctx context.Context, b binaries, work, url, token string, rate float64, d, warmup time.Duration, from int) (step, int, error) {
	dir := filepath.Join(work, fmt.Sprintf("ingest-%d", from))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return step{}, 0, err
	}
	n := values(rate, d, warmup)
	if err := writeLines(filepath.Join(dir, "runs.txt"), from, n, func(i int) string { return fmt.Sprint(i) }); err != nil {
		return step{}, 0, err
	}
	body, err := ingestBody()
	if err != nil {
		return step{}, 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, "body.json"), body, 0o644); err != nil {
		return step{}, 0, err
	}
	plan := `[vars]
token = { secret = true }

[data.runs]
file = "runs.txt"

[[group]]
name = "ingest"
method = "POST"
path = "/v1/attempts"
headers = { Content-Type = "application/json", Authorization = "Bearer {token}" }
body_file = "body.json"
expect = 201
`
	if err := os.WriteFile(filepath.Join(dir, "plan.toml"), []byte(plan), 0o644); err != nil {
		return step{}, 0, err
	}
	s, err := loadRun(ctx, b, dir, url, rate, d, warmup, "token="+token)
	return s, n, err
}

// readStep reads verdicts by the SHAs of runs ingested so far, popular
// commits more often (a Zipf-ranked catalogue), as a merge queue and its
// dashboards do.
func readStep(ctx context.Context, b binaries, work, url string, rate float64, d, warmup time.Duration, from, to int) (step, error) {
	dir := filepath.Join(work, fmt.Sprintf("read-%.0f", rate))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return step{}, err
	}
	if err := writeLines(filepath.Join(dir, "shas.txt"), from, min(to-from, 20000), func(i int) string { return strings.Repeat("0", 30) + fmt.Sprint(i) }); err != nil {
		return step{}, err
	}
	plan := `[data.shas]
file = "shas.txt"
draw = "zipf"
exponent = 1.0

[[group]]
name = "verdicts"
path = "/v1/verdicts?repo=acme/bench&sha={shas}"
expect = 200
`
	if err := os.WriteFile(filepath.Join(dir, "plan.toml"), []byte(plan), 0o644); err != nil {
		return step{}, err
	}
	return loadRun(ctx, b, dir, url, rate, d, warmup)
}
