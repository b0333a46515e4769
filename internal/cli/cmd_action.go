package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/sethvargo/go-githubactions"
)

func init() {
	register(Command{Name: "action", Summary: "the GitHub Action's entrypoint: COMMAND \"ARGS\"", Hidden: true, Run: runAction})
}

// verdicts names each exit code for the action's `verdict` output.
var verdicts = map[int]string{exit.Pass: exit.Word(exit.Pass), exit.Regression: exit.Word(exit.Regression), exit.CannotJudge: exit.Word(exit.CannotJudge)}

// hostNetworkCommands are the commands that reach what they start through
// the host's loopback (the arms' compose services on 127.0.0.1/127.0.0.2)
// or hand the docker engine paths of the tree (a build_image's mount): in a
// container action they run in a sibling container on the host's network.
var hostNetworkCommands = map[string]bool{
	"run": true, "ab": true, "demo": true, "prepare": true, "load": true,
	"services up": true, "services down": true,
}

// siblingNotStarted are the docker CLI's own exit codes: the sibling never
// ran its command, so no verdict was written.
var siblingNotStarted = map[int]bool{125: true, 126: true, 127: true}

// runAction runs one perfgate command for the action: its arguments arrive
// as one input string, split as a shell would without evaluating it. Its
// exit code becomes the step's `exit-code` output and its name the
// `verdict` output; arguments that cannot be split are a cannot-judge.
// A command that needs the host's network runs again in a sibling
// container when the action's own container is not on it (docs/action.md).
func runAction(ctx context.Context, s *IO, args []string) error {
	if len(args) == 0 || len(args) > 2 {
		return actionOutputs(s, exit.Refusef("action: want COMMAND and one string of arguments, got %d words (see action.yml)", len(args)))
	}
	words := strings.Fields(args[0])
	if len(words) == 0 {
		return actionOutputs(s, exit.Refusef("action: the command input is empty: name a perfgate command (see action.yml)"))
	}
	if len(args) == 2 {
		more, err := contract.SplitWords(args[1])
		if err != nil {
			return actionOutputs(s, exit.Refusef("action: the args input %s; quote it as a shell would, without variables or pipes", err))
		}
		words = append(words, more...)
	}
	if needsSibling(s, words) {
		return runSibling(ctx, s, args)
	}
	ctx, stop := host.WatchParent(ctx, s.Env)
	defer stop()
	if words[0] != "release-note" {
		return actionOutputs(s, dispatch(ctx, words, s))
	}
	// The release-notes line is also a step output, for the step that
	// drafts the release.
	var line strings.Builder
	sub := *s
	sub.Out = io.MultiWriter(s.Out, &line)
	err := dispatch(ctx, words, &sub)
	if err == nil && s.Env("GITHUB_OUTPUT") != "" {
		githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Out)).SetOutput("release-note", strings.TrimSpace(line.String()))
	}
	return actionOutputs(s, err)
}

// actionOutputs sets the step outputs from a command's result and returns
// the error that carries its exit code.
func actionOutputs(s *IO, err error) error {
	code := exit.Code(err)
	if s.Env("GITHUB_OUTPUT") != "" {
		a := githubactions.New(githubactions.WithGetenv(s.Env), githubactions.WithWriter(s.Out))
		a.SetOutput("verdict", verdicts[code])
		a.SetOutput("exit-code", strconv.Itoa(code))
	}
	if code == exit.Pass {
		return nil
	}
	return err
}

// needsSibling reports whether the command must run again beside this
// container: it needs the host's network, this process runs in a
// container, is not the sibling already, and its container is not on the
// host's network.
func needsSibling(s *IO, words []string) bool {
	cmd := words[0]
	if len(words) > 1 && hostNetworkCommands[cmd+" "+words[1]] {
		cmd += " " + words[1]
	}
	if !hostNetworkCommands[cmd] || s.Env(host.SiblingEnv) == "1" || s.Env("PERFGATE_NO_SIBLING") == "1" {
		return false
	}
	return selfContainer() != ""
}

// selfContainer is where the action's container is found; tests replace it.
var selfContainer = host.SelfContainerID

// runSibling runs the action again in a sibling container on the host's
// network and passes its exit code through; the sibling writes the step's
// outputs and summary into the same runner files.
func runSibling(ctx context.Context, s *IO, args []string) error {
	id := selfContainer()
	self, err := host.Inspect(ctx, id)
	if err != nil {
		return actionOutputs(s, exit.Refuse(fmt.Errorf("action: the gate runs beside the action on the host's network and must read its own container: %w (is the docker socket mounted?)", err)))
	}
	if self.NetworkMode == "host" {
		return runActionHere(ctx, s, args)
	}
	dir, err := os.Getwd()
	if err != nil {
		return actionOutputs(s, fmt.Errorf("action: reading the working directory: %w", err))
	}
	label := strings.Trim(strings.Join([]string{s.Env("GITHUB_RUN_ID"), s.Env("GITHUB_RUN_ATTEMPT"), s.Env("GITHUB_JOB")}, "-"), "-")
	sib := &host.Sibling{
		Parent: self, Name: "perfgate-" + id[:12], Label: label,
		Args: args, Dir: dir, Env: os.Environ(), Stdout: s.Out, Stderr: s.Err,
	}
	fmt.Fprintf(s.Err, "perfgate: the action's container is on network %s; running %q beside it on the host's network (container %s)\n", self.NetworkMode, args[0], sib.Name)
	code, err := sib.Run(ctx)
	if err != nil {
		return actionOutputs(s, exit.Refuse(err))
	}
	switch {
	case siblingNotStarted[code]:
		return actionOutputs(s, exit.Refusef("action: the sibling container did not start (docker exit %d): see the lines above", code))
	case code == exit.Pass:
		return nil
	case code == exit.Regression || code == exit.CannotJudge:
		// The sibling wrote the outputs itself.
		return &exit.Error{Code: code, Err: fmt.Errorf("%s exited %d in its sibling container", args[0], code)}
	}
	// A crash or a kill: the sibling may have written nothing.
	return actionOutputs(s, exit.Refusef("action: %s ended with exit code %d in its sibling container (a crash or a kill), which is no verdict", args[0], code))
}

// runActionHere runs the command in this process after all.
func runActionHere(ctx context.Context, s *IO, args []string) error {
	env := s.Getenv
	sub := *s
	sub.Getenv = func(k string) string {
		if k == "PERFGATE_NO_SIBLING" {
			return "1"
		}
		if env == nil {
			return ""
		}
		return env(k)
	}
	return runAction(ctx, &sub, args)
}
