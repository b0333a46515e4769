package cli

import (
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/sethvargo/go-githubactions"
)

// inActions reports whether perfgate runs as a GitHub Actions step.
func inActions(s *IO) bool { return s.Env("GITHUB_ACTIONS") == "true" }

// maskSecrets asks the runner to mask every secret value of the plan's
// variables in the job's log, before any request that carries one is made.
func maskSecrets(s *IO, v *plan.Vars) {
	if !inActions(s) {
		return
	}
	a := githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Out))
	for _, secret := range v.Secrets() {
		a.AddMask(secret)
	}
}
