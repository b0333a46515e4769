// Package services gives each arm of a run its own tree's dependent
// services. It loads both trees' compose files fully resolved, compares them
// service by service (definition, mounted files, declared seed files), groups
// services by depends_on connectivity, and starts the head's project plus a
// separate base project (`<project>-perf-base`, published on 127.0.0.2) that
// holds a copy of every group that differs. Identical groups run once and
// both arms share them.
package services

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/perfgate/perfgate/internal/exit"
)

// Tree is one arm's checkout and the part of its gate contract that names
// its services.
type Tree struct {
	// Dir is the tree's root folder; Files and Seeds are relative to it.
	Dir string
	// Files are the compose files in the order compose merges them, e.g.
	// compose.yaml, perf/compose.yaml.
	Files []string
	// Seeds maps a service to the files it is seeded from, which compose
	// cannot know (a loader reads them, not a mount).
	Seeds map[string][]string
	// Project is the compose project name of the head; the base copy runs
	// as Project + "-perf-base". Empty: the tree folder's name, as the gate
	// names its runs after the checkout (not compose's default, the first
	// file's folder, which is "perf" for perf/compose.yaml).
	Project  string
	Profiles []string
	// Env is the environment compose interpolates from ("NAME=VALUE"); the
	// project folder's .env file is read as well, as compose itself would.
	Env []string
}

// loaded is one tree's resolved project.
type loaded struct {
	tree    Tree
	dir     string // absolute, symlinks resolved
	project *types.Project
}

// load resolves a tree's compose files the way `docker compose` would:
// interpolation, extends, profiles, env files.
func load(ctx context.Context, t Tree, arm string) (*loaded, error) {
	if len(t.Files) == 0 {
		return nil, exit.Refusef("%s tree %s: no compose files named: list them in the gate contract (e.g. compose.yaml)", arm, t.Dir)
	}
	dir, err := filepath.Abs(t.Dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s tree folder %s: %w", arm, t.Dir, err)
	}
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	files := make([]string, len(t.Files))
	for i, f := range t.Files {
		// compose-go resolves relative file names against the process's
		// working directory, not WithWorkingDirectory.
		if filepath.IsAbs(f) {
			files[i] = f
		} else {
			files[i] = filepath.Join(dir, f)
		}
		if _, err := os.Stat(files[i]); err != nil {
			return nil, exit.Refusef("%s tree: compose file %s: %v: fix the compose files the gate contract names", arm, files[i], err)
		}
	}
	name := t.Project
	if name == "" {
		if name = SafeName(filepath.Base(dir)); name == "" {
			name = "perfgate"
		}
	}
	// The project folder is the first file's, as `docker compose -f
	// perf/compose.yaml` makes it: relative paths in every file and the
	// .env file are that folder's. The tree's root would mount
	// <root>/init.sql where compose mounts <root>/perf/init.sql.
	opts, err := cli.NewProjectOptions(files,
		cli.WithName(name),
		cli.WithWorkingDirectory(filepath.Dir(files[0])),
		cli.WithEnv(t.Env),
		cli.WithEnvFiles(),
		cli.WithDotEnv,
		cli.WithProfiles(t.Profiles),
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		return nil, fmt.Errorf("reading %s tree's compose options: %w", arm, err)
	}
	p, err := opts.LoadProject(ctx)
	if err != nil {
		// compose-go names lines for YAML syntax only; the line of any
		// other fault is found in the files, and paths are the tree's own.
		msg := composeMessage(dir, err)
		if f, line, ok := composeLine(files, err); ok {
			return nil, exit.Refusef("%s:%d: loading the %s tree's compose file: %s: fix the compose file", relTo(dir, f), line, arm, msg)
		}
		return nil, exit.Refusef("loading the %s tree's compose files %v: %s", arm, t.Files, msg)
	}
	for svc, seeds := range t.Seeds {
		if _, ok := p.Services[svc]; !ok {
			if _, off := p.DisabledServices[svc]; !off {
				return nil, exit.Refusef("%s tree: the gate contract declares seed files %v for service %q, which %v do not define: fix the service name", arm, seeds, svc, t.Files)
			}
		}
		for _, s := range seeds {
			if _, err := os.Stat(filepath.Join(dir, s)); err != nil {
				return nil, exit.Refusef("%s tree: seed file %s of service %q: %v: fix the path in the gate contract", arm, s, svc, err)
			}
		}
	}
	return &loaded{tree: t, dir: dir, project: p}, nil
}

func (l *loaded) names() []string {
	names := make([]string, 0, len(l.project.Services))
	for n := range l.project.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
