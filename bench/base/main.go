// Command base times base resolution on a generated repository of 50,000
// commits and 500 release tags, beside the git CLI doing the same work in
// the same run: `git merge-base` for a pull request's base and `git
// describe` for a release's previous tag. It also times go-git answering
// the two history-wide questions itself, which is why package base asks
// the git CLI instead.
//
//	go run ./bench/base [-commits 50000] [-tags 500] [-runs 7]
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/event"
)

func main() {
	commits := flag.Int("commits", 50000, "commits on main")
	tags := flag.Int("tags", 500, "release tags, evenly spaced along main")
	runs := flag.Int("runs", 7, "timed runs of each (the median is reported)")
	gogit := flag.Bool("gogit", true, "also time go-git's own merge base and tag walk (slow)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the timed perfgate runs here")
	keep := flag.String("keep", "", "generate into this folder (or reuse what a run left there) instead of a temp folder")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/base:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench/base:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*commits, *tags, *runs, *gogit, *keep); err != nil {
		fmt.Fprintln(os.Stderr, "bench/base:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}

const forkBack = 1000 // the pull request forks this many commits before main's tip
const prCommits = 20

func run(commits, tags, runs int, gogit bool, keep string) error {
	if commits < 2*forkBack || tags < 2 || tags > commits {
		return fmt.Errorf("need at least %d commits and 2..commits tags", 2*forkBack)
	}
	dir := keep
	if dir == "" {
		tmp, err := os.MkdirTemp("", "perfgate-bench-base-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	if _, err := os.Stat(dir + "/.git"); err == nil {
		fmt.Printf("reusing the repository in %s\n", dir)
	} else {
		t0 := time.Now()
		if err := generate(dir, commits, tags); err != nil {
			return fmt.Errorf("generating the repository: %w", err)
		}
		fmt.Printf("generated %d commits on main, %d on a pull request branch, %d tags in %s (git fast-import)\n",
			commits, prCommits, tags, time.Since(t0).Round(time.Millisecond))
	}

	ctx := context.Background()
	lastTag := fmt.Sprintf("v1.%d.0", tags-1)
	prevTag := fmt.Sprintf("v1.%d.0", tags-2)
	check := func(c *object.Commit) (bool, string, error) {
		tr, err := c.Tree()
		if err != nil {
			return false, "", err
		}
		_, err = tr.FindEntry("perf/gate.toml")
		return err == nil, "carries no perf/gate.toml", nil
	}
	pr := &event.Event{Name: event.PullRequest, SHA: "refs/heads/pr", BaseRef: "main"}
	rel := &event.Event{Name: event.Release, Tag: lastTag}

	var forkWant string
	perfPR, err := timeIt(runs, func() error {
		c, err := base.Resolve(ctx, dir, pr, check)
		if err == nil {
			forkWant = c.Commit
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("perfgate pull_request base: %w", err)
	}
	var relGot string
	perfRel, err := timeIt(runs, func() error {
		c, err := base.Resolve(ctx, dir, rel, check)
		if err == nil {
			relGot = c.PreviousTag
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("perfgate release base: %w", err)
	}
	if relGot != prevTag {
		return fmt.Errorf("release base after %s, want %s", relGot, prevTag)
	}

	var gitMB string
	cliPR, err := timeIt(runs, func() error {
		out, err := gitOut(dir, "merge-base", "refs/heads/pr", "main")
		gitMB = out
		return err
	})
	if err != nil {
		return err
	}
	if gitMB != forkWant {
		return fmt.Errorf("perfgate's merge base %s differs from git's %s", forkWant, gitMB)
	}
	var described string
	cliRel, err := timeIt(runs, func() error {
		out, err := gitOut(dir, "describe", "--tags", "--abbrev=0", lastTag+"^")
		described = out
		return err
	})
	if err != nil {
		return err
	}
	if described != prevTag {
		return fmt.Errorf("git describe found %s, want %s", described, prevTag)
	}

	fmt.Printf("\n%-31s %11s %11s %7s   %11s %11s %7s\n", "median of "+fmt.Sprint(runs)+" runs", "perfgate", "git CLI", "ratio", "perfgate", "git CLI", "ratio")
	fmt.Printf("%-31s %31s   %31s\n", "", "------------- wall -------------", "---------- CPU (user+sys) -------")
	row := func(name string, p, g timing) {
		r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
		fmt.Printf("%-31s %11s %11s %6.2fx   %11s %11s %6.2fx\n", name,
			r(p.wall), r(g.wall), float64(p.wall)/float64(g.wall), r(p.cpu), r(g.cpu), float64(p.cpu)/float64(g.cpu))
	}
	row("pull_request / git merge-base", perfPR, cliPR)
	row("release / git describe --tags", perfRel, cliRel)
	both := timing{perfPR.wall + perfRel.wall, perfPR.cpu + perfRel.cpu}
	cli := timing{cliPR.wall + cliRel.wall, cliPR.cpu + cliRel.cpu}
	row("both", both, cli)
	wr, cr := float64(both.wall)/float64(cli.wall), float64(both.cpu)/float64(cli.cpu)
	fmt.Printf("\ngoal: under 2s and within 3x of the git CLI: wall %s (%s, %.2fx), CPU %s (%s, %.2fx)\n",
		verdict(both.wall < 2*time.Second && wr <= 3), both.wall.Round(time.Millisecond), wr,
		verdict(both.cpu < 2*time.Second && cr <= 3), both.cpu.Round(time.Millisecond), cr)

	if gogit {
		fmt.Println("\ngo-git answering the history-wide questions itself (one run each):")
		if err := timeGoGit(dir, prevTag); err != nil {
			return err
		}
	}
	return nil
}

func verdict(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

// timing is a median wall time and a median CPU time (this process and the
// git processes it waited for, user + system). CPU time is the fairer
// figure on a shared machine: wall time there includes waiting for a core.
type timing struct{ wall, cpu time.Duration }

func cpuNow() time.Duration {
	var self, kids syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(kids.Utime) + tv(kids.Stime)
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}

func timeIt(runs int, f func() error) (timing, error) {
	if err := f(); err != nil { // warm the page cache once, untimed
		return timing{}, err
	}
	walls := make([]time.Duration, 0, runs)
	cpus := make([]time.Duration, 0, runs)
	for i := 0; i < runs; i++ {
		c, t := cpuNow(), time.Now()
		if err := f(); err != nil {
			return timing{}, err
		}
		walls = append(walls, time.Since(t))
		cpus = append(cpus, cpuNow()-c)
	}
	return timing{median(walls), median(cpus)}, nil
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// timeGoGit times (*Commit).MergeBase and a tag reachability walk, the
// two queries package base leaves to the git CLI.
func timeGoGit(dir, wantPrev string) error {
	r, err := git.PlainOpen(dir)
	if err != nil {
		return err
	}
	commitOf := func(rev string) (*object.Commit, error) {
		h, err := r.ResolveRevision(plumbing.Revision(rev))
		if err != nil {
			return nil, fmt.Errorf("resolving %s: %w", rev, err)
		}
		return r.CommitObject(*h)
	}
	prHead, err := commitOf("refs/heads/pr")
	if err != nil {
		return err
	}
	main, err := commitOf("refs/heads/main")
	if err != nil {
		return err
	}
	t := time.Now()
	if _, err := prHead.MergeBase(main); err != nil {
		return err
	}
	fmt.Printf("  (*Commit).MergeBase:                    %s\n", time.Since(t).Round(time.Millisecond))

	t = time.Now()
	tagCommits := map[plumbing.Hash]string{}
	iter, err := r.Tags()
	if err != nil {
		return err
	}
	err = iter.ForEach(func(ref *plumbing.Reference) error {
		h := ref.Hash()
		if tag, err := r.TagObject(h); err == nil {
			h = tag.Target
		}
		tagCommits[h] = ref.Name().Short()
		return nil
	})
	if err != nil {
		return err
	}
	head, err := main.Parent(0)
	if err != nil {
		return err
	}
	reached := 0
	err = object.NewCommitPreorderIter(head, nil, nil).ForEach(func(c *object.Commit) error {
		if _, ok := tagCommits[c.Hash]; ok {
			reached++
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Printf("  walk from HEAD^ for reachable tags:     %s (%d tags reached; previous is %s)\n", time.Since(t).Round(time.Millisecond), reached, wantPrev)
	return nil
}

// generate writes the repository with one git fast-import stream: main
// carries perf/gate.toml from its first commit and a file changed by every
// commit; a tag every commits/tags commits, the last on main's tip,
// alternately annotated and lightweight, with non-release tags beside some;
// and a pull request branch forked forkBack commits before the tip.
func generate(dir string, commits, tags int) error {
	if out, err := exec.Command("git", "init", "-q", "-b", "main", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("git init: %v: %s", err, out)
	}
	cmd := exec.Command("git", "-C", dir, "fast-import", "--quiet")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	w := bufio.NewWriterSize(in, 1<<20)
	data := func(s string) { fmt.Fprintf(w, "data %d\n%s\n", len(s), s) }
	when := int64(1600000000)
	every := commits / tags
	tagN := 0
	forkAt := commits - forkBack
	for i := 1; i <= commits; i++ {
		when += 60
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\ncommitter Gen <gen@example.test> %d +0000\n", i, when)
		data(fmt.Sprintf("commit %d", i))
		if i > 1 {
			fmt.Fprintf(w, "from :%d\n", i-1)
		} else {
			w.WriteString("M 100644 inline perf/gate.toml\n")
			data("build = \"make\"")
		}
		fmt.Fprintf(w, "M 100644 inline src/file%d.txt\n", i%64)
		data(fmt.Sprintf("content %d", i))
		if (commits-i)%every == 0 && tagN < tags {
			name := fmt.Sprintf("v1.%d.0", tagN)
			if tagN%2 == 0 {
				fmt.Fprintf(w, "tag %s\nfrom :%d\ntagger Gen <gen@example.test> %d +0000\n", name, i, when)
				data("release " + name)
			} else {
				fmt.Fprintf(w, "reset refs/tags/%s\nfrom :%d\n\n", name, i)
			}
			if tagN%50 == 0 {
				fmt.Fprintf(w, "reset refs/tags/nightly-%d\nfrom :%d\n\n", tagN, i)
			}
			tagN++
		}
	}
	for j := 1; j <= prCommits; j++ {
		when += 60
		fmt.Fprintf(w, "commit refs/heads/pr\nmark :%d\ncommitter Gen <gen@example.test> %d +0000\n", commits+j, when)
		data(fmt.Sprintf("pr commit %d", j))
		if j == 1 {
			fmt.Fprintf(w, "from :%d\n", forkAt)
		} else {
			fmt.Fprintf(w, "from :%d\n", commits+j-1)
		}
		w.WriteString("M 100644 inline src/pr.txt\n")
		data(fmt.Sprintf("pr %d", j))
	}
	w.WriteString("done\n")
	if err := w.Flush(); err != nil {
		return err
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		return fmt.Errorf("git fast-import: %w", err)
	}
	if tagN != tags {
		return fmt.Errorf("wrote %d tags, want %d", tagN, tags)
	}
	// fast-import leaves main unchecked-out; HEAD names it, which is all
	// base resolution reads.
	return nil
}
