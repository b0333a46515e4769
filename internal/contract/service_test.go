package contract

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// The test binary doubles as the service an arm builds and starts: a tree's
// build installs a script that runs it with the keys that tree's "binary"
// knows, so base and head really are different programs reading their own
// configs, without a compiler in the loop.
const serviceEnv = "PERFGATE_CONTRACT_TEST_SERVICE"

func TestMain(m *testing.M) {
	if os.Getenv(serviceEnv) == "1" {
		os.Exit(testService(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// testService: <check|serve> <known keys, comma separated>. It reads the
// config named by SVC_CONFIG and the SVC__ overrides (SVC__A__B is key a.b)
// and refuses any key it does not know, the way a strict config loader does.
func testService(args []string) int {
	if len(args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: svc check|serve KNOWN")
		return 2
	}
	known := map[string]bool{}
	for _, k := range strings.Split(args[1], ",") {
		known[k] = true
	}
	var cfg map[string]any
	if _, err := toml.DecodeFile(os.Getenv("SVC_CONFIG"), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "error: reading the config: %v\n", err)
		return 1
	}
	values := map[string]string{}
	flatten("", cfg, values)
	for _, kv := range os.Environ() {
		name, v, _ := strings.Cut(kv, "=")
		if rest, ok := strings.CutPrefix(name, "SVC__"); ok {
			values[strings.ToLower(strings.ReplaceAll(rest, "__", "."))] = v
		}
	}
	var unknown []string
	for k := range values {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		fmt.Fprintf(os.Stderr, "error: unknown key %q in %s\n", k, os.Getenv("SVC_CONFIG"))
	}
	if len(unknown) > 0 {
		return 1
	}
	if args[0] == "check" {
		fmt.Println("config ok")
		return 0
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+values["server.port"])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/values", func(w http.ResponseWriter, _ *http.Request) {
		keys := make([]string, 0, len(values))
		for k := range values {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s=%s\n", k, values[k])
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.Serve(ln); err != nil && err != http.ErrServerClosed {
		return 1
	}
	return 0
}

func flatten(prefix string, m map[string]any, out map[string]string) {
	for k, v := range m {
		key := k
		if prefix != "" {
			key = prefix + "." + k
		}
		if sub, ok := v.(map[string]any); ok {
			flatten(key, sub, out)
			continue
		}
		out[key] = fmt.Sprint(v)
	}
}
