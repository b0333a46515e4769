// Package cli holds perfgate's commands. Each command gets its I/O injected
// (IO), so tests run a command end to end without globals; the exit code is
// decided once, by exit.Code, from the error a command returns.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
)

// IO is what a command reads and writes. Getenv and Stdin may be nil.
type IO struct {
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// IsTerminal reports whether Err is a terminal (live progress lines).
	IsTerminal bool
	// SelfContainer finds the action's own container ("" outside one);
	// nil asks docker (host.SelfContainerID).
	SelfContainer func() string
	// ServiceBackoff is the verdict service client's wait before its
	// second try at a request, doubling after; 0 keeps the client's own
	// (client.New). It does not change how many tries it makes.
	ServiceBackoff time.Duration
}

// Env returns the value of an environment variable through the injected getter.
func (s *IO) Env(name string) string {
	if s.Getenv == nil {
		return ""
	}
	return s.Getenv(name)
}

// command is one subcommand. Name may hold a space ("services plan").
type command struct {
	Name    string
	Summary string
	Hidden  bool
	Run     func(ctx context.Context, io *IO, args []string) error
}

// Run runs perfgate with args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return RunIO(ctx, args, &IO{Out: stdout, Err: stderr, Getenv: os.Getenv, IsTerminal: isTerminal(stderr)})
}

// RunIO is Run with every input injected.
func RunIO(ctx context.Context, args []string, s *IO) error {
	err := dispatch(ctx, args, s)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(s.Err, exit.Line("perfgate", err))
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, s *IO) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		usage(s.Out)
		if len(args) == 0 {
			return exit.Refusef("no command given: run `perfgate help` for the list")
		}
		return nil
	}
	// Two-word commands ("services plan") win over one-word ones.
	if len(args) >= 2 {
		if c, ok := lookup(args[0] + " " + args[1]); ok {
			return c.Run(ctx, s, args[2:])
		}
	}
	if c, ok := lookup(args[0]); ok {
		return c.Run(ctx, s, args[1:])
	}
	return exit.Refusef("unknown command %q: run `perfgate help` for the list", strings.Join(args[:1], " "))
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "perfgate: a performance gate for HTTP services (exit 0 pass, 1 regression, 2 cannot judge)")
	fmt.Fprintln(w, "\nCommands:")
	var shown []command
	for _, c := range table() {
		if !c.Hidden {
			shown = append(shown, c)
		}
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].Name < shown[j].Name })
	for _, c := range shown {
		fmt.Fprintf(w, "  %-18s %s\n", c.Name, c.Summary)
	}
}

// newFlags makes a flag set that reports parse errors as refused input
// (exit 2) instead of exiting the process.
func newFlags(name string, s *IO) *flag.FlagSet {
	fs := flag.NewFlagSet("perfgate "+name, flag.ContinueOnError)
	fs.SetOutput(s.Err)
	return fs
}
