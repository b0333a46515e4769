// Package check is perfgate check: a repository's gate contract checked
// offline (gate file, both arms' configs, the compose plan, base resolution,
// the plans), without docker, PostgreSQL or a build. It is FerroFED's
// `gate.sh --self-test` for any repository. It returns one Result a check;
// the command prints them.
package check

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/services"
	"github.com/perfgate/perfgate/internal/trees"
)

// Ports the arms' configs are rendered with: FerroFED's gate's, since
// nothing is started.
const headPort, basePort = 8080, 8070

// Options name what is checked.
type Options struct {
	Repo    string // the checkout (the head)
	Base    string // check only this commit's tree as the base arm ("" every base the events resolve to)
	BaseRef string // pull_request and merge_group: the base branch ("" main, master or origin/main, the first that exists)
	Tag     string // release: the release's tag ("" the newest tag on HEAD)
}

// Status is how one check came out.
type Status string

const (
	OK   Status = "ok"
	Skip Status = "skip"
	Fail Status = "FAIL"
)

// Result is one check: its name and what it found (Err for a failure).
type Result struct {
	Status Status
	Name   string
	Detail string
	Err    error
}

// Line is the result as perfgate check prints it, a failure's error on one
// line.
func (r Result) Line() string {
	return fmt.Sprintf("%-5s %s: %s", r.Status, r.Name, r.Detail)
}

// Report is every check in order and the first failure, so a repository's
// author sees every problem and the exit names the first.
type Report struct {
	Results []Result
	Fails   int
	First   error
}

// checker keeps the results as they come.
type checker struct {
	Report
	// trees are the folders of the contracts read (the checkout, each
	// base's export): refusals name their files relative to them, as the
	// gate file does, since a base's export is gone when the check ends.
	trees []string
}

func (c *checker) ok(name, format string, a ...any) {
	c.Results = append(c.Results, Result{Status: OK, Name: name, Detail: fmt.Sprintf(format, a...)})
}

func (c *checker) skip(name, format string, a ...any) {
	c.Results = append(c.Results, Result{Status: Skip, Name: name, Detail: fmt.Sprintf(format, a...)})
}

func (c *checker) fail(name string, err error) {
	err = c.inTree(err)
	c.Results = append(c.Results, Result{Status: Fail, Name: name, Detail: strings.ReplaceAll(err.Error(), "\n", " / "), Err: err})
	c.Fails++
	if c.First == nil {
		c.First = err
	}
}

// inTree is err with the trees' folders left out of its message.
func (c *checker) inTree(err error) error {
	msg := err.Error()
	for _, t := range c.trees {
		msg = strings.ReplaceAll(msg, t+string(filepath.Separator), "")
	}
	if msg == err.Error() {
		return err
	}
	return &treeError{msg: msg, err: err}
}

// treeError keeps the error it rewords, and so its exit code.
type treeError struct {
	msg string
	err error
}

func (e *treeError) Error() string { return e.msg }
func (e *treeError) Unwrap() error { return e.err }

// Run checks the contract of o.Repo. The error is the check's own trouble
// (no scratch folder); failed checks are in the Report.
func Run(ctx context.Context, o Options) (*Report, error) {
	work, err := os.MkdirTemp("", "perfgate-check-")
	if err != nil {
		return nil, fmt.Errorf("making the check's scratch folder: %w", err)
	}
	defer os.RemoveAll(work)
	c := &checker{}

	head := c.contract(ctx, o.Repo, "head", nil)
	if head != nil {
		c.render(ctx, head, "head", headPort, filepath.Join(work, "head"), nil)
		c.plans(head)
	}
	commits := c.bases(ctx, o.Repo, o.BaseRef, o.Tag, head)
	if o.Base != "" {
		commit, err := gitOut(ctx, o.Repo, "rev-parse", "--verify", o.Base+"^{commit}")
		if err != nil {
			c.fail("base tree", exit.Refusef("%s: cannot resolve --base %q (%v); give a commit of this repository", o.Repo, o.Base, err))
		}
		commits = []string{commit}
	}
	// Each base the events resolved to is booted as an arm somewhere: its
	// own contract, its compose copy and its rewritten config.
	diffed := false
	for i, commit := range commits {
		if commit == "" {
			continue
		}
		arm := "base " + event.ShortSHA(commit)
		baseTree := filepath.Join(work, fmt.Sprintf("base-tree-%d", i))
		if err := trees.Export(ctx, o.Repo, commit, baseTree); err != nil {
			c.fail(arm+" tree", fmt.Errorf("exporting the base %s: %w", event.ShortSHA(commit), err))
			continue
		}
		bc := c.contract(ctx, baseTree, arm, head)
		if bc == nil || head == nil {
			continue
		}
		svc := c.compose(ctx, arm, head, bc)
		diffed = true
		c.render(ctx, bc, arm, basePort, filepath.Join(work, fmt.Sprintf("base-%d", i)), svc)
	}
	if !diffed && head != nil && len(head.Compose) > 0 {
		// No base to diff with: the head's own files are still read.
		if names, err := services.CheckTree(ctx, services.Tree{Dir: head.Tree, Files: head.Compose, Seeds: head.Seeds, Project: "perfgate-check"}, "head"); err != nil {
			c.fail("compose plan (head)", err)
		} else {
			c.ok("compose plan (head)", "no base to diff with; %s load: services %s", strings.Join(head.Compose, ", "), strings.Join(names, ", "))
		}
	}
	return &c.Report, nil
}
