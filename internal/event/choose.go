package event

import "github.com/perfgate/perfgate/internal/exit"

// Choose is the event a command judges: the local one when name is given
// (a laptop's --event pull_request --base-ref origin/main), else the GitHub
// Actions event. Local options without a name are refused.
func Choose(name string, lo LocalOptions, getenv func(string) string) (*Event, error) {
	if name != "" {
		return Local(name, lo)
	}
	if lo != (LocalOptions{}) {
		return nil, exit.Refusef("--head, --base-ref, --base-sha, --before, --tag and --forced describe a local event: add --event")
	}
	return FromActions(getenv)
}
