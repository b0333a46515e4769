package daemon

import (
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/attempts"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
	"github.com/perfgate/perfgate/internal/verdict/publish"
)

// EnvPrefix starts the environment variable of each flag.
const EnvPrefix = "PERFGATE_VERDICTD_"

// IO is what the command reads and writes.
type IO struct {
	Out, Err io.Writer
	Getenv   func(string) string
}

func (s IO) env(name string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(name)
}

// config is everything serve reads.
type config struct {
	listen     string
	store      db.Options
	maxBody    int64
	issuer     string
	audience   string
	allowRepos listFlag // as given; check reads them into allow
	allow      map[int64]string
	workflows  listFlag
	relays     listFlag
	reads      string
	stallProne string
	maxRetries int
	learn      verdict.Learn
	logLevel   string
	shutdown   time.Duration
	github     publish.Settings
}

// listFlag is a repeatable, comma-separated flag of strings; nil until
// given, so the package's default holds.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }

func (l *listFlag) Set(v string) error {
	for _, one := range strings.Split(v, ",") {
		if one = strings.TrimSpace(one); one != "" {
			*l = append(*l, one)
		}
	}
	return nil
}

// flagAliases are flags kept under an earlier name, each to the flag it
// is now.
var flagAliases = map[string]string{"github-app-key-file": "github-app-key"}

// storeFlags are the flags every subcommand that opens the store takes.
func storeFlags(fs *flag.FlagSet, o *db.Options) {
	fs.StringVar(&o.DataDir, "data", "verdictd-data", "the `folder` of the embedded SQLite store (verdictd.sqlite, WAL)")
	fs.StringVar(&o.DatabaseURL, "database-url", "", "a PostgreSQL `URL` (postgres://...) instead of SQLite, for several replicas")
}

func serveFlags(fs *flag.FlagSet, c *config, s IO) {
	fs.StringVar(&c.listen, "listen", "127.0.0.1:8088", "the `address` to serve on")
	storeFlags(fs, &c.store)
	fs.Int64Var(&c.maxBody, "max-body", httpapi.DefaultMaxBody, "the largest request body in `bytes` (413 past it)")
	fs.StringVar(&c.issuer, "oidc-issuer", httpapi.GitHubIssuer, "the OIDC `issuer` whose tokens may write")
	fs.StringVar(&c.audience, "oidc-audience", "", "the `audience` OIDC tokens must carry; empty accepts no OIDC token")
	fs.Var(&c.allowRepos, "allow-repo", "`owner/name=repository_id` an OIDC token may write for; repeatable, or comma-separated")
	fs.Var(&c.workflows, "workflow", "a `workflow` (owner/repo/.github/workflows/file.yml, optionally @ref or @refs/tags/*) whose jobs may post their own run's attempts, matched against the OIDC token's job_workflow_ref; repeatable; "+httpapi.RepositoryPlaceholder+" is the token's repository (default "+strings.Join(httpapi.DefaultWorkflows, ",")+")")
	fs.Var(&c.relays, "relay-workflow", "a `workflow` whose jobs, on workflow_run, may post another run's attempts (a fork pull request's), each checked against GitHub's record of that run; repeatable (default "+strings.Join(httpapi.DefaultRelays, ",")+")")
	// Reads need a credential by default: a private repository's verdicts
	// name its commits, pull requests and timings, and the service cannot
	// tell a private repository from a public one without asking GitHub.
	fs.StringVar(&c.reads, "reads", "token", "`token` (reads need a credential for the repository) or public (anyone reads verdicts and the page: only for public repositories)")
	fs.StringVar(&c.stallProne, "stall-prone", "", "comma-separated CPU `models` whose exit 1 is retried, beside those learned from history")
	fs.IntVar(&c.maxRetries, "max-retries", attempts.DefaultMaxRetries, "retries after the first attempt, at most")
	fs.IntVar(&c.learn.Window, "learn-window", verdict.DefaultLearnWindow, "how many of a CPU model's last `attempts` its exit-2 share is taken over")
	fs.Float64Var(&c.learn.Share, "learn-share", verdict.DefaultLearnShare, "the exit-2 `share` (0-1) over which a CPU model is learned stall-prone")
	fs.IntVar(&c.learn.MinAttempts, "learn-min", verdict.DefaultLearnMin, "the fewest `attempts` on a model before history may mark it")
	fs.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.DurationVar(&c.shutdown, "shutdown-grace", 30*time.Second, "how long in-flight requests may take to finish after SIGTERM")
	// The GitHub settings default to internal/verdict/publish's own variables;
	// the token is read from PERFGATE_GITHUB_TOKEN only, never a flag, so
	// it is not in the process list.
	env := publish.SettingsFromEnv(s.env)
	c.github.Token = env.Token
	fs.StringVar(&c.github.APIURL, "github-api-url", env.APIURL, "GitHub's REST API `URL` (empty: api.github.com; GitHub Enterprise: https://HOST/api/v3/)")
	fs.StringVar(&c.github.AppID, "github-app-id", env.AppID, "the GitHub App's `id` that publishes checks (with --github-app-key); only an App may create check runs")
	fs.StringVar(&c.github.AppKeyFile, "github-app-key", env.AppKeyFile, "the GitHub App's private key `file` (PEM, from the App's settings page)")
	fs.StringVar(&c.github.AppKeyFile, "github-app-key-file", env.AppKeyFile, "the same as --github-app-key (its earlier name)")
	fs.StringVar(&c.github.InstallationID, "github-installation-id", env.InstallationID, "one installation `id` to publish through; default: the App's installation on each repository's owner")
}

// parse parses args, then fills each flag not given from its environment
// variable. A bad value is refused (exit 2) naming the flag or variable,
// once (exit.ParseFlags, as perfgate's commands parse theirs).
func parse(fs *flag.FlagSet, args []string, s IO) error {
	if err := exit.ParseFlags(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) {
		given[f.Name] = true
		if target, ok := flagAliases[f.Name]; ok {
			given[target] = true
		}
	})
	for alias, target := range flagAliases {
		// An alias and its flag share one value: the environment may not
		// override the one given on the command line through the other.
		if given[target] {
			given[alias] = true
		}
	}
	var bad error
	fs.VisitAll(func(f *flag.Flag) {
		name := EnvPrefix + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v := s.env(name); v != "" && !given[f.Name] && bad == nil {
			if err := fs.Set(f.Name, v); err != nil {
				bad = exit.Refusef("%s=%q: %v", name, v, err)
			}
		}
	})
	if bad != nil {
		return bad
	}
	if fs.NArg() > 0 {
		return exit.Refusef("%s: unexpected argument %q; every setting is a flag (see `%s -h`)", fs.Name(), fs.Arg(0), fs.Name())
	}
	return nil
}

func (c *config) check() error {
	// The allow-list is read here rather than by its flag: a value the
	// flag refuses comes back inside the flag package's own sentence,
	// which quotes the value a second time.
	c.allow = map[int64]string{}
	for _, one := range c.allowRepos {
		if err := httpapi.ParseAllow(one, c.allow); err != nil {
			return exit.Refuse(err)
		}
	}
	switch {
	case c.reads != "public" && c.reads != "token":
		return exit.Refusef("--reads %q: write --reads public or --reads token", c.reads)
	case c.learn.Share <= 0 || c.learn.Share >= 1:
		return exit.Refusef("--learn-share %g: write a share between 0 and 1, for example --learn-share 0.3", c.learn.Share)
	case c.learn.Window < 1 || c.learn.MinAttempts < 1 || c.learn.MinAttempts > c.learn.Window:
		return exit.Refusef("--learn-window %d --learn-min %d: both at least 1, and the minimum within the window", c.learn.Window, c.learn.MinAttempts)
	case c.maxRetries < 0:
		return exit.Refusef("--max-retries %d: write 0 or more", c.maxRetries)
	case c.maxBody < 1024:
		return exit.Refusef("--max-body %d: a report needs more; write at least 1024 (the default is %d)", c.maxBody, httpapi.DefaultMaxBody)
	case len(c.allow) > 0 && c.audience == "":
		return exit.Refusef("--allow-repo is set but --oidc-audience is not: OIDC tokens are checked against an audience; set --oidc-audience (the audience the workflow asks its token for)")
	}
	return c.checkGitHub()
}

// checkGitHub refuses a bad GitHub setting by its flag's name as well as
// its variable's: publish's own refusal names only the variable, which
// reads as wrong to whoever typed the flag.
func (c *config) checkGitHub() error {
	for _, id := range []struct{ flag, env, v string }{
		{"--github-app-id", publish.EnvAppID, c.github.AppID},
		{"--github-installation-id", publish.EnvInstallationID, c.github.InstallationID},
	} {
		v := strings.TrimSpace(id.v)
		if n, err := strconv.ParseInt(v, 10, 64); v != "" && (err != nil || n <= 0) {
			return exit.Refusef("%s %q (or %s): not a GitHub ID: write the positive number the App's settings page shows", id.flag, id.v, id.env)
		}
	}
	if f := c.github.AppKeyFile; f != "" {
		if _, err := os.Stat(f); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // the path is named once, first
			}
			return exit.Refusef("--github-app-key %s (or %s): %v: give the App's private key, the PEM file generated on its settings page", f, publish.EnvAppKeyFile, err)
		}
	}
	return nil
}
