package services

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// Pair is the head's tree and the base's as `perfgate services` names
// them on the command line; cmd names the command in refusals.
type Pair struct {
	Head, Base, Project string
	Files, Profiles     []string
	Seeds, Env          []string // SERVICE=FILE, NAME=VALUE
}

// Trees are the head's and the base's Tree: compose.yaml unless Files
// name others, the project the head folder's name unless Project is set.
func (t Pair) Trees(cmd string) (Tree, Tree, error) {
	if t.Base == "" {
		return Tree{}, Tree{}, exit.Refusef("perfgate %s: --base is required: name the base's tree (e.g. --base target/perf-base/tree)", cmd)
	}
	files := t.Files
	if len(files) == 0 {
		files = []string{"compose.yaml"}
	}
	seeds := map[string][]string{}
	for _, s := range t.Seeds {
		svc, file, ok := strings.Cut(s, "=")
		if !ok || svc == "" || file == "" {
			return Tree{}, Tree{}, exit.Refusef("perfgate %s: --seed-file %q: write SERVICE=FILE, e.g. --seed-file pixseed=docker/quickstart/patients.tsv", cmd, s)
		}
		seeds[svc] = append(seeds[svc], file)
	}
	for _, e := range t.Env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return Tree{}, Tree{}, exit.Refusef("perfgate %s: --env %q: write NAME=VALUE", cmd, e)
		}
	}
	project := t.Project
	if project == "" {
		abs, err := filepath.Abs(t.Head)
		if err != nil {
			return Tree{}, Tree{}, fmt.Errorf("resolving --head %s: %w", t.Head, err)
		}
		project = SafeName(filepath.Base(abs))
	}
	mk := func(dir string) Tree {
		return Tree{Dir: dir, Files: files, Seeds: seeds, Project: project, Profiles: t.Profiles, Env: t.Env}
	}
	return mk(t.Head), mk(t.Base), nil
}

// WriteTable prints the plan as perfgate services prints it: a row a
// group (shared or copied, and why), the ports the base's copies move.
func (p *Plan) WriteTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "GROUP\tSERVICES\tBASE\tWHY")
	for i, g := range p.Groups {
		mode := "shared"
		if g.Copied {
			mode = "copied"
		}
		why := g.Why
		if len(g.ByPath) > 0 {
			// Said in the table: a reader must not take "identical" to
			// cover a host folder nobody read.
			why += "; outside the trees, compared by path only: " + strings.Join(g.ByPath, ", ")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i+1, strings.Join(g.Services, ", "), mode, why)
	}
	tw.Flush()
	if p.Copied() {
		fmt.Fprintf(w, "\nThe base's copies run as compose project %s on %s.\n", SafeName(p.Project)+"-<run id>"+BaseSuffix, BaseHost)
		for _, m := range p.Moved {
			fmt.Fprintf(w, "  %s: %s:%s/%s -> %s:%s\n", m.Service, m.From, m.Port, m.Protocol, BaseHost, m.Port)
		}
	} else {
		fmt.Fprintln(w, "\nNothing differs: both arms share every service.")
	}
	fmt.Fprintf(w, "diff took %s\n", p.DiffTime.Round(time.Millisecond))
}
