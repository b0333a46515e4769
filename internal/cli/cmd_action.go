package cli

import (
	"context"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/sethvargo/go-githubactions"

	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/host"
	"github.com/perfgate/perfgate/internal/verdict/client"
)

// hostNetworkCommands are the commands that reach what they start through
// the host's loopback (the arms' compose services on 127.0.0.1/127.0.0.2)
// or hand the docker engine paths of the tree (a build_image's mount): in a
// container action they run in a sibling container on the host's network.
var hostNetworkCommands = map[string]bool{
	"run": true, "ab": true, "demo": true, "prepare": true, "load": true,
	"services up": true, "services down": true,
}

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
	// A verdict service address the client would refuse (a password in
	// it) stops every step of the workflow, the build job's first: found
	// only by `attempts next`, it would cost each attempt a whole gate
	// before the verdict job refused it.
	if err := checkServiceURL(&serviceFlags{url: s.Env(client.ServiceEnv)}); err != nil {
		return actionOutputs(s, err)
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
		a.SetOutput("verdict", exit.Word(code))
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
	return selfContainer(s) != ""
}

// selfContainer is where the action's container is found.
func selfContainer(s *IO) string {
	if s.SelfContainer != nil {
		return s.SelfContainer()
	}
	return host.SelfContainerID()
}

// runSibling runs the action again in a sibling container on the host's
// network (host.RunBeside); the sibling writes the step's outputs and
// summary into the same runner files when it runs to a verdict.
func runSibling(ctx context.Context, s *IO, args []string) error {
	onHost, wrote, err := host.RunBeside(ctx, host.Beside{ID: selfContainer(s), Args: args, Getenv: s.Env, Environ: os.Environ(), Stdout: s.Out, Stderr: s.Err})
	switch {
	case onHost:
		return runActionHere(ctx, s, args)
	case wrote:
		return err
	}
	return actionOutputs(s, err)
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
