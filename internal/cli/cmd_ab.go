package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/armsfile"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/gate"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/report"
)

func init() {
	register(Command{Name: "ab", Summary: "run the A/B gate over two arms given as commands or an arms file", Run: runAB})
}

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
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	p, err := plan.ParseFile(*planPath)
	if err != nil {
		return err
	}
	if err := prof.apply(&p.AB); err != nil {
		return exit.Refusef("ab: %v", err)
	}
	if err := p.CheckAB(p.AB); err != nil {
		return err
	}
	v, err := plan.ResolveVars(p, vars, s.Env)
	if err != nil {
		return err
	}
	maskSecrets(s, v)
	// perfgate ab has no gate file: the plan's own [[control]] tables are
	// its controls (docs/ab.md).
	o := gate.Options{Plan: p, Vars: v, Controls: p.Controls, OutDir: *out, Seed: *seed, Log: s.Err, Store: *withStore}
	if s.IsTerminal {
		o.Progress = s.Err
	}
	switch {
	case *armsPath != "":
		f, err := armsfile.Read(*armsPath)
		if err != nil {
			return err
		}
		o.Arms = f.Pair()
		o.Store = o.Store || f.Store
	case *baseCmd != "" && *headCmd != "":
		// Checked before anything starts: a remote URL was once refused
		// only after both arms were up.
		for _, u := range []struct {
			flag, val string
			schemes   []string
		}{{"base-url", *baseURL, []string{"http", "https"}}, {"head-url", *headURL, []string{"http", "https"}}, {"ready", *ready, []string{"http", "https", "tcp"}}} {
			if u.val == "" || u.flag == "ready" && strings.HasPrefix(u.val, "/") {
				continue
			}
			if err := contract.LoopbackURL(u.val, u.schemes...); err != nil {
				return exit.Refusef("ab: --%s %q %v", u.flag, withoutUserinfo(u.val), err)
			}
		}
		o.Arms = gate.Pair(
			gate.ArmSpec{Command: []string{"sh", "-c", "exec " + *baseCmd}, URL: *baseURL, Dir: *baseDir, Ready: *ready},
			gate.ArmSpec{Command: []string{"sh", "-c", "exec " + *headCmd}, URL: *headURL, Dir: *headDir, Ready: *ready})
	default:
		return exit.Refusef("ab: give both --base-cmd and --head-cmd, or --arms FILE (docs/ab.md)")
	}
	if c, ok := p.Controls.Of(plan.ControlVariant); ok {
		// The variant arm is the head's command started again beside
		// the head, with the control's overrides in its environment.
		va, err := gate.VariantOf(o.Arms[1], c.Overrides)
		if err != nil {
			return exit.Refusef("ab: %s:%d: %v", c.File, c.Line, err)
		}
		o.Arms = append(o.Arms, va)
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

// withoutUserinfo is raw with any user name and password cut out, for a
// refusal to quote: a URL refused for carrying credentials must not print
// them. The @PORT@ placeholder is kept, so its @ signs are not taken for
// the one that ends the credentials.
func withoutUserinfo(raw string) string {
	const hidden = "\x00PORT\x00"
	s := strings.ReplaceAll(raw, contract.PortPlaceholder, hidden)
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return raw
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		rest = rest[at+1:]
	}
	return strings.ReplaceAll(scheme+"://"+rest, hidden, contract.PortPlaceholder)
}
