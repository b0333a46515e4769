package demo

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// ServiceArgv is perfgate demo-service: the example service's command line
// over the demo repository's perf config (--config FILE). The settings its
// dependency serves become flags, the overrides (EXAMPLED_ variables) the
// rest. With --check it only reads the config, as the gate's config check
// runs it, and run is false.
func ServiceArgv(ctx context.Context, args []string, stdout, stderr io.Writer) (argv []string, run bool, err error) {
	var config string
	check := false
	var rest []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--check":
			check = true
		case args[i] == "--config" && i+1 < len(args):
			config = args[i+1]
			i++
		default:
			rest = append(rest, args[i])
		}
	}
	if config == "" {
		return nil, false, exit.Refusef("demo-service: give --config FILE (the rendered perf/service.toml)")
	}
	c, err := ReadConfig(config)
	if err != nil {
		return nil, false, exit.Refuse(err)
	}
	if check {
		fmt.Fprintf(stdout, "demo-service: %s is fine\n", config)
		return nil, false, nil
	}
	reg, err := ReadRegistry(c)
	if err != nil {
		return nil, false, exit.Refuse(err)
	}
	for name, svc := range reg.Services {
		fmt.Fprintf(stderr, "demo-service: the registry names %s at %s\n", name, svc.Address)
	}
	settings, err := ServiceArgs(ctx, c, 30*time.Second)
	if err != nil {
		return nil, false, exit.Refuse(err)
	}
	if len(settings) > 0 {
		fmt.Fprintf(stderr, "%s%s: %s\n", SettingsLine, c.SettingsURL, strings.Join(settings, " "))
	}
	// The command line's flags come last, so they win over the settings.
	return append(settings, rest...), true, nil
}
