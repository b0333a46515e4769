// Package service is perfgate's bundled example HTTP service: a small
// service whose cost is set by knobs (latency, CPU work, memory, store
// writes, background work, stalls, wrong statuses), so `perfgate demo`
// and the tests can give one arm a known regression and check that the gate
// catches it. docs/example-service.md describes every knob.
package exampleservice

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/tomlpos"
)

// EnvPrefix is the prefix of the environment variables that set knobs:
// EXAMPLED_CPU_WORK=20000 is --cpu-work 20000. A flag on the command line
// wins over the variable.
const EnvPrefix = "EXAMPLED_"

// config is the parsed knobs.
type config struct {
	addr          string
	latency       time.Duration
	latencyFactor float64
	waitMean      time.Duration // mean of an exponential wait per request
	slowShare     float64       // share of requests slowed by slowBy
	slowBy        time.Duration
	cpuWork       int
	alloc         int64
	leak          int64
	store         string
	storeFile     string
	storeWrites   int
	idleBusy      float64
	idleCommits   float64
	stall         time.Duration
	stallEvery    time.Duration
	readyDelay    time.Duration
	overrides     statusOverrides
	tokenCache    bool
}

// statusOverrides maps a request path to the status it is answered with.
type statusOverrides map[string]int

func (o statusOverrides) String() string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, o[k])
	}
	return strings.Join(parts, ",")
}

func (o statusOverrides) Set(v string) error {
	for _, item := range strings.Split(v, ",") {
		path, code, ok := strings.Cut(strings.TrimSpace(item), "=")
		if !ok || !strings.HasPrefix(path, "/") {
			return fmt.Errorf("%q is not PATH=CODE: write for example /hello=500", item)
		}
		n, err := strconv.Atoi(code)
		if err != nil || n < 200 || n > 599 {
			return fmt.Errorf("%q: the status must be a number from 200 to 599", item)
		}
		o[path] = n
	}
	return nil
}

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{overrides: statusOverrides{}}
	fs := flag.NewFlagSet("exampled", flag.ContinueOnError)
	// A bad flag gets one line (the returned error), not the whole usage,
	// so an arm's log tail shows the mistake; -h prints the usage.
	fs.SetOutput(io.Discard)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:8080", "`host:port` to listen on")
	fs.DurationVar(&c.latency, "latency", 0, "extra latency slept in every request")
	fs.DurationVar(&c.waitMean, "wait-mean", 0, "each request also waits an exponentially distributed time of this mean, as on a store or a downstream call")
	fs.Float64Var(&c.slowShare, "slow-share", 0, "`fraction` of requests, drawn at random, that wait --slow-by longer (a tail-only slowdown)")
	fs.DurationVar(&c.slowBy, "slow-by", 0, "how much longer the --slow-share requests wait")
	fs.Float64Var(&c.latencyFactor, "latency-factor", 1, "multiply each request's natural handling time (work + --latency) by this factor, by sleeping the difference; 1.1 is a 10% slowdown")
	fs.IntVar(&c.cpuWork, "cpu-work", 0, "SHA-256 rounds per request (about 0.13 us each on a 2-core CI machine)")
	fs.Int64Var(&c.alloc, "alloc", 0, "`bytes` allocated and touched per request, freed after it")
	fs.Int64Var(&c.leak, "leak", 0, "`bytes` allocated per request and never freed (a leak)")
	fs.StringVar(&c.store, "store", "", "PostgreSQL connection string (`DSN`) of the service's store")
	fs.StringVar(&c.storeFile, "store-file", "", "`path` of a file holding the store's connection string (perfgate writes store.dsn)")
	fs.IntVar(&c.storeWrites, "store-writes", 1, "committed transactions per POST /items when a store is set")
	fs.Float64Var(&c.idleBusy, "idle-busy", 0, "`fraction` of one core a background worker burns at all times (0 off, 1 a whole core)")
	fs.Float64Var(&c.idleCommits, "idle-commits", 0, "`rate` of transactions/s a background outbox poller commits (0 off, -1 a poller that never waits)")
	fs.DurationVar(&c.stall, "stall", 0, "every --stall-every, requests hang for this long")
	fs.DurationVar(&c.stallEvery, "stall-every", 3*time.Second, "period of the stalls set by --stall")
	fs.DurationVar(&c.readyDelay, "ready-delay", 0, "/healthz answers 503 for this long after start")
	fs.BoolVar(&c.tokenCache, "token-cache", true, "GET /onward/{id} exchanges a token once and caches it; false exchanges one per request (a missing cache: one more round trip each, counted at GET /calls)")
	fs.Var(c.overrides, "status-override", "answer requests to an exact path with another status, as `PATH=CODE` (repeatable, or comma-separated)")

	var envErr error
	var knobs []string
	fs.VisitAll(func(f *flag.Flag) {
		name := EnvPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		knobs = append(knobs, name)
		if v, ok := os.LookupEnv(name); ok && envErr == nil {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("environment variable %s=%q: %w", name, v, err)
			}
		}
	})
	if envErr != nil {
		return nil, envErr
	}
	if err := unknownEnv(knobs); err != nil {
		return nil, err
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "exampled: perfgate's example service; every knob is also EXAMPLED_<NAME> in the environment (docs/example-service.md)")
			fs.SetOutput(stderr)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("exampled: %w (run with -h for the knobs)", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("exampled: unexpected argument %q: every knob is a flag (run with -h)", fs.Arg(0))
	}
	return c, c.check()
}

// unknownEnv refuses a variable of the prefix that names no knob: a typo
// such as EXAMPLED_LATENCYY=4ms would otherwise leave the service at its
// default, and a regression planted that way would pass the gate unseen.
// Only the name is quoted: a value may be a connection string.
func unknownEnv(knobs []string) error {
	var unknown []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, EnvPrefix) && !slices.Contains(knobs, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	what := "environment variable " + unknown[0] + " names"
	if len(unknown) > 1 {
		what = "environment variables " + strings.Join(unknown, ", ") + " name"
	}
	fix := "run with -h for the knobs"
	if n := tomlpos.Nearest(unknown[0], knobs); n != "" {
		fix = "did you mean " + n + "?"
	}
	return fmt.Errorf("exampled: %s no knob; %s", what, fix)
}

func (c *config) check() error {
	switch {
	case c.latency < 0:
		return fmt.Errorf("exampled: --latency %s is negative", c.latency)
	case c.waitMean < 0 || c.slowBy < 0:
		return fmt.Errorf("exampled: --wait-mean %s and --slow-by %s must not be negative", c.waitMean, c.slowBy)
	case c.slowShare < 0 || c.slowShare > 1:
		return fmt.Errorf("exampled: --slow-share %g is not a fraction between 0 and 1", c.slowShare)
	case c.latencyFactor < 1:
		return fmt.Errorf("exampled: --latency-factor %g is below 1: it can only slow requests down", c.latencyFactor)
	case c.cpuWork < 0 || c.alloc < 0 || c.leak < 0:
		return errors.New("exampled: --cpu-work, --alloc and --leak must not be negative")
	case c.alloc > 1<<30 || c.leak > 1<<30:
		return errors.New("exampled: --alloc and --leak are bounded to 1 GiB per request")
	case c.storeWrites < 1:
		return fmt.Errorf("exampled: --store-writes %d: a write request commits at least once", c.storeWrites)
	case c.idleBusy < 0 || c.idleBusy > 1:
		return fmt.Errorf("exampled: --idle-busy %g is not a fraction of a core between 0 and 1", c.idleBusy)
	case c.idleCommits < 0 && c.idleCommits != -1:
		return fmt.Errorf("exampled: --idle-commits %g: write a rate >= 0, or -1 for a poller that never waits", c.idleCommits)
	case c.store != "" && c.storeFile != "":
		return errors.New("exampled: give --store or --store-file, not both")
	case c.idleCommits != 0 && c.store == "" && c.storeFile == "":
		return errors.New("exampled: --idle-commits needs a store: add --store DSN or --store-file PATH")
	case c.stall < 0 || (c.stall > 0 && c.stallEvery <= c.stall):
		return fmt.Errorf("exampled: --stall %s must be shorter than --stall-every %s", c.stall, c.stallEvery)
	}
	return nil
}

// dsn returns the store's connection string, "" without a store.
func (c *config) dsn() (string, error) {
	if c.storeFile == "" {
		return c.store, nil
	}
	b, err := os.ReadFile(c.storeFile)
	if err != nil {
		return "", fmt.Errorf("exampled: reading the store's connection string from --store-file: %w", err)
	}
	dsn := strings.TrimSpace(string(b))
	if dsn == "" {
		return "", fmt.Errorf("exampled: --store-file %s is empty: it should hold a PostgreSQL connection string", c.storeFile)
	}
	return dsn, nil
}
