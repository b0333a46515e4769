package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
)

// Beside is the action run again in a sibling container on the host's
// network, for a command that reaches what it starts through the host's
// loopback.
type Beside struct {
	ID      string   // the action's own container
	Args    []string // the action's arguments: COMMAND and its string of arguments
	Getenv  func(string) string
	Environ []string // the action's environment, passed on to the sibling
	Stdout  io.Writer
	Stderr  io.Writer
}

// siblingNotStarted are the docker CLI's own exit codes: the sibling never
// ran its command, so no verdict was written.
var siblingNotStarted = map[int]bool{125: true, 126: true, 127: true}

// RunBeside runs b in a sibling and passes its exit code through. onHost
// is true, and nothing ran, when the action's container is on the host's
// network already. wrote is true when the sibling wrote the step's outputs
// itself (it ran to a verdict); otherwise the caller writes them from err.
func RunBeside(ctx context.Context, b Beside) (onHost, wrote bool, err error) {
	self, err := Inspect(ctx, b.ID)
	if err != nil {
		return false, false, exit.Refuse(fmt.Errorf("action: the gate runs beside the action on the host's network and must read its own container: %w (is the docker socket mounted?)", err))
	}
	if self.NetworkMode == "host" {
		return true, false, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return false, false, fmt.Errorf("action: reading the working directory: %w", err)
	}
	label := strings.Trim(strings.Join([]string{b.Getenv("GITHUB_RUN_ID"), b.Getenv("GITHUB_RUN_ATTEMPT"), b.Getenv("GITHUB_JOB")}, "-"), "-")
	sib := &Sibling{
		Parent: self, Name: "perfgate-" + short(b.ID), Label: label,
		Args: b.Args, Dir: dir, Env: b.Environ, Stdout: b.Stdout, Stderr: b.Stderr,
	}
	fmt.Fprintf(b.Stderr, "perfgate: the action's container is on network %s; running %q beside it on the host's network (container %s)\n", self.NetworkMode, b.Args[0], sib.Name)
	code, err := sib.Run(ctx)
	if err != nil {
		return false, false, exit.Refuse(err)
	}
	switch {
	case siblingNotStarted[code]:
		return false, false, exit.Refusef("action: the sibling container did not start (docker exit %d): see the lines above", code)
	case code == exit.Pass:
		return false, true, nil
	case code == exit.Regression || code == exit.CannotJudge:
		return false, true, &exit.Error{Code: code, Err: fmt.Errorf("%s exited %d in its sibling container", b.Args[0], code)}
	}
	// A crash or a kill: the sibling may have written nothing.
	return false, false, exit.Refusef("action: %s ended with exit code %d in its sibling container (a crash or a kill), which is no verdict", b.Args[0], code)
}
