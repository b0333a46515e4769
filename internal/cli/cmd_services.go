package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/services"
)

func init() {
	register(Command{Name: "services plan", Summary: "compare two trees' compose services: which groups the base shares, which it copies", Run: runServicesPlan})
	register(Command{Name: "services up", Summary: "start the head's services and the base's copies (127.0.0.2), wait until healthy", Run: runServicesUp})
	register(Command{Name: "services down", Summary: "remove every container, network and volume of a run, by its label", Run: runServicesDown})
}

type treeFlags struct {
	head, base, project string
	files, profiles     listFlag
	seeds, env          listFlag
}

func (t *treeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.head, "head", ".", "the head's tree")
	fs.StringVar(&t.base, "base", "", "the base's tree (required)")
	fs.StringVar(&t.project, "project", "", "compose project name (default: the head tree's folder name)")
	fs.Var(&t.files, "f", "compose file, relative to each tree; repeat in merge order (default compose.yaml)")
	fs.Var(&t.profiles, "profile", "compose profile to enable; repeatable")
	fs.Var(&t.seeds, "seed", "SERVICE=FILE: a file the service is seeded from, relative to each tree; repeatable")
	fs.Var(&t.env, "env", "NAME=VALUE for compose interpolation (beside each tree's .env); repeatable")
}

func (t *treeFlags) trees(name string) (services.Tree, services.Tree, error) {
	if t.base == "" {
		return services.Tree{}, services.Tree{}, exit.Refusef("perfgate %s: --base is required: name the base's tree (e.g. --base target/perf-base/tree)", name)
	}
	files := []string(t.files)
	if len(files) == 0 {
		files = []string{"compose.yaml"}
	}
	seeds := map[string][]string{}
	for _, s := range t.seeds {
		svc, file, ok := strings.Cut(s, "=")
		if !ok || svc == "" || file == "" {
			return services.Tree{}, services.Tree{}, exit.Refusef("perfgate %s: --seed %q: write SERVICE=FILE, e.g. --seed pixseed=docker/quickstart/patients.tsv", name, s)
		}
		seeds[svc] = append(seeds[svc], file)
	}
	for _, e := range t.env {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return services.Tree{}, services.Tree{}, exit.Refusef("perfgate %s: --env %q: write NAME=VALUE", name, e)
		}
	}
	project := t.project
	if project == "" {
		abs, err := filepath.Abs(t.head)
		if err != nil {
			return services.Tree{}, services.Tree{}, fmt.Errorf("resolving --head %s: %w", t.head, err)
		}
		project = services.SafeName(filepath.Base(abs))
	}
	mk := func(dir string) services.Tree {
		return services.Tree{Dir: dir, Files: files, Seeds: seeds, Project: project, Profiles: t.profiles, Env: t.env}
	}
	return mk(t.head), mk(t.base), nil
}

func runServicesPlan(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("services plan", s)
	var tf treeFlags
	tf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	head, base, err := tf.trees("services plan")
	if err != nil {
		return err
	}
	p, err := services.Diff(ctx, head, base)
	if err != nil {
		return err
	}
	printPlan(s.Out, p)
	return nil
}

func printPlan(w io.Writer, p *services.Plan) {
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
		fmt.Fprintf(w, "\nThe base's copies run as compose project %s on %s.\n", services.SafeName(p.Project)+"-<run id>"+services.BaseSuffix, services.BaseHost)
		for _, m := range p.Moved {
			fmt.Fprintf(w, "  %s: %s:%s/%s -> %s:%s\n", m.Service, m.From, m.Port, m.Protocol, services.BaseHost, m.Port)
		}
	} else {
		fmt.Fprintln(w, "\nNothing differs: both arms share every service.")
	}
	fmt.Fprintf(w, "diff took %s\n", p.DiffTime.Round(time.Millisecond))
}

func runServicesUp(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("services up", s)
	var tf treeFlags
	tf.register(fs)
	runID := fs.String("run-id", "", "the run's id, set as label perfgate.run on everything started and part of the project names (default: generated)")
	logDir := fs.String("log-dir", contract.Target(contract.DefaultTarget).Run().Services(), "where the resolved compose files and the services' logs go")
	wait := fs.Duration("wait-timeout", 3*time.Minute, "how long to wait for every service to be healthy")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	head, base, err := tf.trees("services up")
	if err != nil {
		return err
	}
	if *runID == "" {
		*runID = gate.NewRunID()
	}
	start := time.Now()
	p, err := services.Diff(ctx, head, base)
	if err != nil {
		return err
	}
	p.WaitTimeout = *wait
	printPlan(s.Out, p)
	// What a killed `perfgate run` of this checkout left holds its ports.
	// Services this command started are not swept: they carry no owner,
	// they are meant to outlive it.
	// Said before anything starts: a user whose command is killed needs it.
	fmt.Fprintf(s.Err, "run %s: remove its services with: perfgate services down --run-id %s\n", *runID, *runID)
	checkout := gate.Checkout(head.Dir)
	stale, err := services.DownStale(ctx, checkout, gate.OwnerGone)
	for _, st := range stale {
		fmt.Fprintf(s.Err, "services: removed run %s of this checkout, whose process is gone\n", st.RunID)
	}
	if err != nil {
		return err
	}
	r, err := services.Up(ctx, p, services.Start{RunID: *runID, LogDir: *logDir, Checkout: checkout})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "\nrun %s: %d compose project(s) healthy %s after `services up` started (files and logs in %s)\n",
		*runID, len(r.Projects), time.Since(start).Round(time.Millisecond), r.LogDir())
	fmt.Fprintf(s.Out, "stop them with: perfgate services down --run-id %s\n", *runID)
	return nil
}

func runServicesDown(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("services down", s)
	runID := fs.String("run-id", "", "the run whose services to remove (required)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *runID == "" {
		return exit.Refusef("perfgate services down: --run-id is required: give the id `services up` printed")
	}
	if err := services.DownByLabel(ctx, *runID); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "run %s: nothing labelled %s=%s remains\n", *runID, services.RunLabel, *runID)
	return nil
}
