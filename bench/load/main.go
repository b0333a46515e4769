// Command load benchmarks perfgate's load engine against its peers (vegeta,
// wrk, hey) in the same run, generator and target pinned to different cores.
// One command per claim:
//
//	go run ./bench/load ceiling      # highest sustained rate on one core
//	go run ./bench/load efficiency   # CPU s per 1,000 requests at 2,000/s (-rounds N)
//	go run ./bench/load accuracy     # 2,000/s for 30 s: achieved rate, send lateness
//	go run ./bench/load co           # coordinated omission against a stalling target
//	go run ./bench/load memory       # RSS after 1M requests vs after 100k
//
// Each prints every figure and the ratio to each peer, and exits 1 when the
// claim fails. It is not part of go test: it takes minutes and wants quiet cores.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"time"
)

const (
	genCPU    = "0" // the generator's core
	targetCPU = "1" // the target's core
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./bench/load ceiling|efficiency|accuracy|co|memory")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "ceiling":
		err = ceiling(ctx)
	case "efficiency":
		err = efficiency(ctx, os.Args[2:])
	case "accuracy":
		err = accuracy(ctx)
	case "co":
		err = coordinatedOmission(ctx)
	case "memory":
		err = memory(ctx)
	// The benchmark re-runs itself for the pinned processes.
	case "target":
		err = runTarget(ctx, os.Args[2:])
	case "gen":
		err = runGen(ctx, os.Args[2:])
	case "floor":
		err = runFloor(ctx, os.Args[2:])
	default:
		err = fmt.Errorf("unknown benchmark %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/load:", err)
		os.Exit(1)
	}
}

// startTarget runs `self target mode` pinned to the target's core and
// returns its base URL; the process ends when ctx does or the bench exits.
func startTarget(ctx context.Context, mode string) (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, "taskset", "-c", targetCPU, self, "target", mode)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe() // the target exits when this closes
	if err != nil {
		return "", nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting the target (is taskset installed?): %w", err)
	}
	stopFn := func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stopFn()
		return "", nil, fmt.Errorf("reading the target's address: %w", err)
	}
	return "http://" + strings.TrimSpace(line), stopFn, nil
}

// measured is a pinned process's output and its CPU time.
type measured struct {
	out  []byte
	cpu  time.Duration
	wall time.Duration
}

func pinned(ctx context.Context, stdin string, name string, args ...string) (measured, error) {
	cmd := exec.CommandContext(ctx, "taskset", append([]string{"-c", genCPU, name}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	cmd.Stderr = os.Stderr
	began := time.Now()
	out, err := cmd.Output()
	m := measured{out: out, wall: time.Since(began)}
	if cmd.ProcessState != nil {
		m.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return m, fmt.Errorf("%s %s: %w", name, strings.Join(args, " "), err)
	}
	return m, nil
}

// genResult is what `self gen` prints.
type genResult struct {
	Intended, Sent, Dropped, Late uint64
	Offered, Achieved             float64
	Requests, Expected            uint64
	Errors                        map[string]uint64
	P50, P90, P99, Max            float64 // ms, nearest rank, from the intended send time
	LateP50, LateP99              float64 // ms
	RSS100k, RSS1M                int64   // KiB, memory mode only
}

func gen(ctx context.Context, target string, args ...string) (genResult, measured, error) {
	self, err := os.Executable()
	if err != nil {
		return genResult{}, measured{}, err
	}
	m, err := pinned(ctx, "", self, append([]string{"gen", "-target", target}, args...)...)
	if err != nil {
		return genResult{}, m, err
	}
	var r genResult
	if err := json.Unmarshal(m.out, &r); err != nil {
		return r, m, fmt.Errorf("reading the generator's output %q: %w", m.out, err)
	}
	return r, m, nil
}

func need(tools ...string) error {
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s is not installed (vegeta: go install github.com/tsenart/vegeta/v12@v12.13.0; wrk, hey: apt-get install -y wrk hey; taskset: util-linux)", t)
		}
	}
	return nil
}

func vegetaPath() string {
	if p, err := exec.LookPath("vegeta"); err == nil {
		return p
	}
	return "/root/go/bin/vegeta"
}

func verdict(ok bool, claim string) error {
	if ok {
		fmt.Printf("PASS  %s\n", claim)
		return nil
	}
	fmt.Printf("FAIL  %s\n", claim)
	return fmt.Errorf("claim failed: %s", claim)
}
