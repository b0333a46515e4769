package check

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/services"
)

// render fills the arm's config and overrides, as run does before the
// arm starts, and for the base checks that the rewrite to 127.0.0.2 moved
// every address of its copied services and kept every other byte.
func (c *checker) render(ctx context.Context, k *contract.Contract, arm string, port int, dir string, svc *services.Plan) {
	var before []byte
	var rewrite func([]byte) []byte
	var addrs map[string][]string
	if svc != nil {
		rewrite, addrs = svc.Rewrite, svc.Addresses(true)
	}
	if rewrite != nil {
		// The config as it would be without the rewrite, in the same
		// folder, so @DIR@ fills the same.
		plain, err := k.Render(ctx, contract.RenderOptions{Port: port, Dir: dir})
		if err != nil {
			c.fail(arm+" config", err)
			return
		}
		if before, err = os.ReadFile(plain.ConfigPath); err != nil {
			c.fail(arm+" config", fmt.Errorf("reading the rendered %s: %w", plain.ConfigPath, err))
			return
		}
	}
	a, err := k.Render(ctx, contract.RenderOptions{Port: port, Dir: dir, Rewrite: rewrite, Services: addrs})
	if err != nil {
		c.fail(arm+" config", err)
		return
	}
	var over []string
	for _, e := range a.Env {
		if name, _, _ := strings.Cut(e, "="); strings.HasPrefix(name, k.Prefix) {
			over = append(over, name)
		}
	}
	c.ok(arm+" config", "%s rendered on port %d with %d override(s) %s", k.Config, port, len(over), strings.Join(over, " "))
	if rewrite == nil {
		return
	}
	rendered, err := os.ReadFile(a.ConfigPath)
	if err != nil {
		c.fail(arm+" config rewrite", fmt.Errorf("reading the rendered %s: %w", a.ConfigPath, err))
		return
	}
	if err := rewriteReaches(k, svc, before, rendered, a.Env); err != nil {
		c.fail(arm+" config rewrite", err)
		return
	}
	if bytes.Equal(before, rendered) {
		c.ok(arm+" config rewrite", "no address of a copied service in %s: nothing moved to 127.0.0.2", k.Config)
		return
	}
	moved := strings.Count(string(rendered), "127.0.0.2") - strings.Count(string(before), "127.0.0.2")
	c.ok(arm+" config rewrite", "%d address(es) in %s moved to 127.0.0.2, the rest unchanged", moved, k.Config)
}

// rewriteReaches refuses a base whose arm would not reach its own copy of
// a service: the rewrite moves 127.0.0.1:PORT and localhost:PORT in the
// config alone, so a moved port the config names under another host, or
// only in an override, or not at all, stays pointed at the head's copy
// (or at nothing). A contract that generates files listing each arm's
// services (generate) hands the base its addresses there instead.
func rewriteReaches(k *contract.Contract, svc *services.Plan, before, rendered []byte, env []string) error {
	for _, m := range svc.Moved {
		if strings.Contains(m.Port, "-") {
			continue // a range: its ports are named one by one, if at all
		}
		loopback := regexp.MustCompile(`(127\.0\.0\.1|localhost):` + m.Port + `([^0-9]|$)`)
		for _, e := range env {
			name, value, _ := strings.Cut(e, "=")
			if strings.HasPrefix(name, k.Prefix) && loopback.MatchString(value) {
				file, line := overrideLine(k, name)
				return exit.Refusef("%s:%d: %s names %s:%s, the address of %s, whose base copy runs on %s:%s; the rewrite to %s moves addresses in %s only, so the base arm would reach the head's %s: name the address in %s instead",
					file, line, name, loopback.FindStringSubmatch(value)[1], m.Port, m.Service, services.BaseHost, m.Port, services.BaseHost, k.Config, m.Service, k.Config)
			}
		}
		if strings.Contains(string(rendered), services.BaseHost+":"+m.Port) || len(k.Generate) > 0 {
			continue
		}
		anyHost := regexp.MustCompile(`([A-Za-z0-9_.\-\[\]:]*:` + m.Port + `)(?:[^0-9]|$)`)
		if loc := anyHost.FindSubmatchIndex(before); loc != nil {
			line := 1 + bytes.Count(before[:loc[2]], []byte("\n"))
			named := string(before[loc[2]:loc[3]])
			return exit.Refusef("%s:%d: names %s's port %s as %s, which the rewrite to %s cannot move (it moves 127.0.0.1:%s and localhost:%s only), so the base arm would not reach its own copy of %s: write 127.0.0.1:%s",
				k.Config, line, m.Service, m.Port, named, services.BaseHost, m.Port, m.Port, m.Service, m.Port)
		}
		file, line := svc.PortLine(m.Service, m.Port)
		if file == "" {
			file, line = k.Config, 1
		}
		return exit.Refusef("%s:%d: the base's copy of %s publishes port %s on %s, but %s names no 127.0.0.1:%s or localhost:%s for the rewrite to move, so the base arm cannot be pointed at its own copy: name the address in %s, or have the contract generate a file with each arm's services (generate, docs/contract.md)",
			file, line, m.Service, m.Port, services.BaseHost, k.Config, m.Port, m.Port, k.Config)
	}
	return nil
}

// overrideLine is where an arm's override is set: its line in the
// override file, else in the legacy script it is derived from.
func overrideLine(k *contract.Contract, name string) (string, int) {
	files := []string{k.Overrides}
	if k.Legacy != nil {
		files = append(files, k.Legacy.Script)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(k.Tree, filepath.FromSlash(f)))
		if err != nil {
			continue
		}
		for i, l := range strings.Split(string(data), "\n") {
			if strings.Contains(l, name+"=") {
				return f, i + 1
			}
		}
	}
	return k.Overrides, 1
}
