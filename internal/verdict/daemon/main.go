package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/perfgate/perfgate/internal/exit"
)

// Main runs perfgate-verdictd with args (without the program name). Its
// error decides the exit code through internal/exit.
func Main(ctx context.Context, args []string, s IO) error {
	cmd, rest := "serve", args
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, rest = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = serve(ctx, rest, s)
	case "migrate":
		err = migrate(ctx, rest, s)
	case "token":
		err = token(ctx, rest, s)
	case "help":
		usage(s)
		return nil
	default:
		usage(s)
		return exit.Refusef("unknown command %q: the commands are serve (the default), migrate and token add", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func usage(s IO) {
	fmt.Fprint(s.Err, `perfgate-verdictd: the verdict service (docs/verdictd.md)

  perfgate-verdictd [serve] [flags]     serve the API and the page
  perfgate-verdictd migrate [flags]     bring the store's schema up to date
  perfgate-verdictd token add OWNER/REPO [flags]
                                        mint a write token for a repository

Every flag may come from the environment: --data is PERFGATE_VERDICTD_DATA.
`)
}
