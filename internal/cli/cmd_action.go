package cli

import (
	"context"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/sethvargo/go-githubactions"
)

func init() {
	register(Command{Name: "action", Summary: "the GitHub Action's entrypoint: COMMAND \"ARGS\"", Hidden: true, Run: runAction})
}

// verdicts names each exit code for the action's `verdict` output.
var verdicts = map[int]string{exit.Pass: "pass", exit.Regression: "regression", exit.CannotJudge: "cannot-judge"}

// runAction runs one perfgate command for the action: its arguments arrive
// as one input string, split as a shell would without evaluating it, and
// its exit code becomes the step's `verdict` output.
func runAction(ctx context.Context, s *IO, args []string) error {
	if len(args) == 0 || len(args) > 2 {
		return exit.Refusef("action: want COMMAND and one string of arguments, got %d words (see action.yml)", len(args))
	}
	words := []string{args[0]}
	if len(args) == 2 {
		more, err := contract.SplitWords(args[1])
		if err != nil {
			return exit.Refusef("action: the args input %s; quote it as a shell would, without variables or pipes", err)
		}
		words = append(words, more...)
	}
	err := dispatch(ctx, words, s)
	code := exit.Code(err)
	if s.Env("GITHUB_OUTPUT") != "" {
		githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Out)).SetOutput("verdict", verdicts[code])
	}
	if err != nil && code != exit.Pass {
		return err
	}
	return nil
}
