package contract

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// validateGenerate checks the generate key's names: plain file names, each
// once, since perfgate writes them into the arm's work directory itself.
func (c *Contract) validateGenerate() error {
	seen := map[string]bool{}
	for _, name := range c.Generate {
		if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\@") || strings.ContainsRune(name, 0) {
			return c.refuse("generate", "generate names %q: write plain file names (like \"registry.toml\"); perfgate writes each into the arm's work directory, where the config reads it as @DIR@/<name>", name)
		}
		if seen[name] {
			return c.refuse("generate", "generate names %q twice: list each file once", name)
		}
		seen[name] = true
	}
	return nil
}

// checkReadsGenerated refuses a config that reads none of the files the
// contract generates for it: such an arm would run over services nobody
// told it about (FerroFED's gate refuses a base whose file reads no
// registry.toml). raw is the config as the tree holds it.
func (c *Contract) checkReadsGenerated(raw []byte) error {
	for _, name := range c.Generate {
		if !bytes.Contains(raw, []byte("@DIR@/"+name)) {
			return exit.Refusef("%s: reads no @DIR@/%s, which %s:%d generates for every arm with the addresses of its services: name it in the config (for example registry = \"@DIR@/%s\"), or drop it from generate",
				c.Config, name, GateFile, max(c.lines["generate"], 1), name)
		}
	}
	return nil
}

// writeGenerated writes each generated file into the arm's work directory:
// one TOML table per service with the addresses the arm reaches it at.
func (c *Contract) writeGenerated(dir string, services map[string][]string) error {
	if len(c.Generate) == 0 {
		return nil
	}
	names := make([]string, 0, len(services))
	for n := range services {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString("# Written by perfgate for this arm: the services it runs over and the\n# addresses it reaches them at (docs/contract.md).\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\n[services.%s]\n", strconv.Quote(n))
		quoted := make([]string, len(services[n]))
		for i, a := range services[n] {
			quoted[i] = strconv.Quote(a)
		}
		if len(quoted) > 0 {
			fmt.Fprintf(&b, "address = %s\n", quoted[0])
		}
		fmt.Fprintf(&b, "addresses = [%s]\n", strings.Join(quoted, ", "))
	}
	for _, name := range c.Generate {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("writing the arm's %s: %w", name, err)
		}
	}
	return nil
}
