package cli

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/armsfile"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/report"
)

func runAB(ctx context.Context, s *IO, args []string) error {
	fs := newFlags("ab", s)
	planPath := fs.String("plan", "perf/plan.toml", "the plan")
	armsPath := fs.String("arms", "", "a TOML file describing both arms (instead of the --base-*/--head-* flags)")
	baseCmd := fs.String("base-cmd", "", "shell command starting the base arm (@PORT@, @DIR@ filled in)")
	headCmd := fs.String("head-cmd", "", "shell command starting the head arm")
	baseURL := fs.String("base-url", "", "the base arm's URL (default http://127.0.0.1:@PORT@)")
	headURL := fs.String("head-url", "", "the head arm's URL")
	baseDir := fs.String("base-dir", "", "the base arm's work directory")
	headDir := fs.String("head-dir", "", "the head arm's work directory")
	ready := fs.String("ready", "", "ready probe: a path on each arm's URL, e.g. /healthz (default /)")
	withStore := fs.Bool("store", false, "start a PostgreSQL with a database per arm; each arm finds its DSN in @DIR@/store.dsn")
	out := fs.String("out", "target/perf", "folder for the report, the summary and the arms' logs")
	seed := fs.Int64("seed", 1, "seed of the request sequences")
	var vars listFlag
	fs.Var(&vars, "var", "a plan variable, name=value or name=@file (repeatable)")
	var prof profileFlags
	prof.register(fs)
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	if err := exit.NoArguments(fs); err != nil {
		return err
	}
	if *armsPath != "" {
		// The arms file describes both arms whole: a --base-*, --head-*
		// or --ready beside it would be ignored.
		var beside []string
		fs.Visit(func(f *flag.Flag) {
			if strings.HasPrefix(f.Name, "base-") || strings.HasPrefix(f.Name, "head-") || f.Name == "ready" {
				beside = append(beside, "--"+f.Name)
			}
		})
		if len(beside) > 0 {
			return exit.Refusef("ab: %s cannot go with --arms: the arms file %s describes both arms; write the setting there (command, url, dir or ready under [base] and [head]), or leave --arms out", strings.Join(beside, ", "), *armsPath)
		}
	}
	p, v, err := gate.ABPlan(*planPath, prof.apply, vars, s.Env)
	if err != nil {
		return err
	}
	maskSecrets(s, v)
	// perfgate ab has no gate file: the plan's own [[control]] tables are
	// its controls (docs/ab.md).
	o := gate.Options{Plan: p, Vars: v, Controls: p.Controls, OutDir: *out, Seed: *seed, Log: s.Err, Store: *withStore, Getenv: s.Env}
	if s.IsTerminal {
		o.Progress = s.Err
	}
	switch {
	case *armsPath != "":
		f, err := armsfile.Read(*armsPath)
		if err != nil {
			return err
		}
		o.Arms = gate.FromArmsFile(f)
		o.Store = o.Store || f.Store
	case *baseCmd != "" && *headCmd != "":
		if o.Arms, err = gate.CommandArms(gate.CommandArm{Cmd: *baseCmd, URL: *baseURL, Dir: *baseDir}, gate.CommandArm{Cmd: *headCmd, URL: *headURL, Dir: *headDir}, *ready); err != nil {
			return err
		}
	default:
		return exit.Refusef("ab: give both --base-cmd and --head-cmd, or --arms FILE (docs/ab.md)")
	}
	if o.Arms, err = gate.WithVariant(o.Arms, p.Controls); err != nil {
		return err
	}
	// The run's errors may quote a request, a URL or an arm's log: the
	// whole message, inner errors included, is redacted.
	return v.RedactError(gateAndReport(ctx, s, o))
}

// gateAndReport runs the gate and reports its verdict.
func gateAndReport(ctx context.Context, s *IO, o gate.Options) error {
	rep, err := gate.Run(ctx, o)
	if err != nil {
		return err
	}
	return printVerdict(s, rep, o.OutDir)
}

// printVerdict prints the verdict and summary, hands the summary to GitHub
// when it runs in Actions, and returns the verdict's error.
func printVerdict(s *IO, rep *report.Report, out string) error {
	if err := report.Text(s.Out, rep); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "\nreport: %s\nsummary: %s\n", filepath.Join(out, gate.ReportFile), filepath.Join(out, gate.SummaryFile))
	if err := appendStepSummary(s, filepath.Join(out, gate.SummaryFile)); err != nil {
		return err
	}
	return gate.VerdictError(rep.Verdict)
}

// appendStepSummary adds the Markdown summary to the GitHub job summary
// when GITHUB_STEP_SUMMARY names one; outside Actions it does nothing
// (go-githubactions panics without it).
func appendStepSummary(s *IO, mdPath string) error {
	if s.Env("GITHUB_STEP_SUMMARY") == "" {
		return nil
	}
	md, err := os.ReadFile(mdPath)
	if err != nil {
		return fmt.Errorf("reading the job summary: %w", err)
	}
	githubactions.New(githubactions.WithGetenv(s.Env)).AddStepSummary(string(md))
	return nil
}
