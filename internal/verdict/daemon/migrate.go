package daemon

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
)

// migrate brings the store's schema up to date and says what it applied;
// serve does the same at start, so this is for running it alone (before
// rolling replicas out, or to check a database URL).
func migrate(ctx context.Context, args []string, s IO) error {
	fs := flag.NewFlagSet("perfgate-verdictd migrate", flag.ContinueOnError)
	fs.SetOutput(s.Err)
	var o db.Options
	storeFlags(fs, &o)
	if err := parse(fs, args, s); err != nil {
		return err
	}
	st, err := db.Open(ctx, o)
	if err != nil {
		return exit.Refuse(err)
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return err
	}
	v, err := st.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "%s: schema at version %d (applied now: %v)\n", st, v, applied)
	return nil
}

// token add OWNER/REPO mints a write token, stores its hash and prints the
// token once.
func token(ctx context.Context, args []string, s IO) error {
	if len(args) == 0 || args[0] != "add" {
		return exit.Refusef("perfgate-verdictd token: write `perfgate-verdictd token add OWNER/REPO`")
	}
	fs := flag.NewFlagSet("perfgate-verdictd token add", flag.ContinueOnError)
	fs.SetOutput(s.Err)
	var o db.Options
	storeFlags(fs, &o)
	rest := args[1:]
	var repo string
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		repo, rest = rest[0], rest[1:]
	}
	if err := parse(fs, rest, s); err != nil {
		return err
	}
	// A token for a name GitHub cannot have would never match an attempt's
	// repository: refused here, not found out at the first post.
	if !verdict.ValidRepository(repo) {
		return exit.Refusef("perfgate-verdictd token add: %q is not OWNER/REPO as GitHub names repositories (an owner of 1-39 letters, digits, hyphens and underscores; a name of letters, digits, '.', '_' and '-'): write it as GitHub shows it, for example `perfgate-verdictd token add acme/api`", repo)
	}
	st, err := db.Open(ctx, o)
	if err != nil {
		return exit.Refuse(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		return err
	}
	tok, hash, err := httpapi.NewToken()
	if err != nil {
		return err
	}
	if err := st.PutTokenHash(ctx, repo, hash); err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "a write token for %s (shown once; the service keeps only its hash):\n", repo)
	fmt.Fprintln(s.Out, tok)
	return nil
}
