package demo

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// ServeDependency is the demo's compose dependency: a settings server that
// answers GET /settings with the settings file (read again on each request,
// as a seed file mounted into a container is) until ctx ends.
func ServeDependency(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo-dependency", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "0.0.0.0:8080", "where to listen")
	settings := fs.String("settings", "/seed/settings.txt", "the settings file served at /settings")
	if err := fs.Parse(args); err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /settings", func(w http.ResponseWriter, _ *http.Request) {
		b, err := os.ReadFile(*settings)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("demo-dependency: %w", err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	fmt.Fprintf(stderr, "demo-dependency: serving %s on %s\n", *settings, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("demo-dependency: %w", err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(stop)
	<-done
	return err
}

// ServiceConfig is the example service's perf config (perf/service.toml).
type ServiceConfig struct {
	Name string `toml:"name"`
	// SettingsURL is the dependency the service reads its settings from at
	// start; the base's is rewritten to its own copy on 127.0.0.2.
	SettingsURL string `toml:"settings_url"`
	// Registry is the file perfgate generated for this arm (the contract's
	// generate): the services it runs over and their addresses.
	Registry string `toml:"registry"`
}

// Registry is the generated file's content.
type Registry struct {
	Services map[string]struct {
		Address   string   `toml:"address"`
		Addresses []string `toml:"addresses"`
	} `toml:"services"`
}

// ReadRegistry reads the arm's generated registry; a config that names
// none has an empty one.
func ReadRegistry(c ServiceConfig) (Registry, error) {
	var r Registry
	if c.Registry == "" {
		return r, nil
	}
	if _, err := toml.DecodeFile(c.Registry, &r); err != nil {
		return r, fmt.Errorf("reading the registry %s: %w", c.Registry, err)
	}
	return r, nil
}

// ErrUnknownKeys is a config that names keys the service does not know.
var ErrUnknownKeys = errors.New("unknown keys")

// ReadConfig reads the service's config, refusing keys it does not know
// in the words the gate's config check reads (`unknown keys: a, b`).
func ReadConfig(path string) (ServiceConfig, error) {
	var c ServiceConfig
	md, err := toml.DecodeFile(path, &c)
	if err != nil {
		return c, fmt.Errorf("reading %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		sort.Strings(keys)
		return c, fmt.Errorf("%s: %w: %s", path, ErrUnknownKeys, strings.Join(keys, ", "))
	}
	return c, nil
}

// ServiceArgs turns the config into the example service's flags: the
// settings read from the dependency (one knob=value a line), retried for
// up to wait while the dependency starts.
func ServiceArgs(ctx context.Context, c ServiceConfig, wait time.Duration) ([]string, error) {
	if c.SettingsURL == "" {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var last error
	for {
		body, err := fetch(ctx, c.SettingsURL)
		if err == nil {
			return settingsArgs(body)
		}
		if errors.Is(err, errTooManySettings) {
			return nil, fmt.Errorf("reading the settings: %w", err)
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("reading the settings from %s: %w", c.SettingsURL, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func fetch(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxSettings+1))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %s", url, resp.Status)
	}
	// Cut short, the last line read would be a knob with a truncated value
	// (alloc=40 of alloc=4096), taken as the settings' own.
	if len(b) > maxSettings {
		return "", fmt.Errorf("%s answered %w (%d KiB): keep its settings file under that, one knob=value a line", url, errTooManySettings, maxSettings>>10)
	}
	return string(b), nil
}

// maxSettings bounds the settings a dependency answers.
const maxSettings = 1 << 16

var errTooManySettings = errors.New("more settings than the service reads")

func settingsArgs(body string) ([]string, error) {
	var args []string
	for i, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("settings line %d: %q is not knob=value", i+1, line)
		}
		args = append(args, "--"+strings.TrimSpace(k)+"="+strings.TrimSpace(v))
	}
	return args, nil
}

// SettingsRead is the line an arm's log holds naming where its settings
// came from ("" when it read none), so the demo can show that the base
// read its own copy of the dependency.
func SettingsRead(logPath string) string {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if _, rest, ok := strings.Cut(line, SettingsLine); ok {
			return rest
		}
	}
	return ""
}

// SettingsLine starts the line demo-service logs with its settings.
const SettingsLine = "demo-service: settings from "
