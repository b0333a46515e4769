package verdict

import (
	"errors"
	"fmt"
)

// InputError is a request the service refuses: Field names the JSON field
// (facts.run_id) and Msg says what is wrong and how to fix it. The HTTP API
// answers it with 400.
type InputError struct {
	Field string
	Msg   string
}

func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

func inputf(field, format string, a ...any) error {
	return &InputError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// ErrNoBase is why a release line is refused: the gate named no base, and
// nothing may claim one. The HTTP API answers it with 409.
var ErrNoBase = errors.New("the gate named no base")

// ErrNotFinal is why a release line is not there yet: the run's final
// attempt has not arrived. The HTTP API answers it with 409.
var ErrNotFinal = errors.New("the run has no final verdict yet")

// ErrNoRelease is what a Publisher returns when the release a line is for
// does not exist yet (release.yml drafts it before the gate; a release
// made by hand may come later): the service keeps the line and writes it
// when the release is there.
var ErrNoRelease = errors.New("the release does not exist yet")
