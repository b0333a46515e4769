package check

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

func TestResultLine(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Status: OK, Name: "plan", Detail: "perf/plan.toml"}, "ok    plan: perf/plan.toml"},
		{Result{Status: Skip, Name: "rate rule", Detail: "no max_rate"}, "skip  rate rule: no max_rate"},
		{Result{Status: Fail, Name: "head gate file", Detail: "x"}, "FAIL  head gate file: x"},
	} {
		if got := tc.r.Line(); got != tc.want {
			t.Errorf("Line() = %q, want %q", got, tc.want)
		}
	}
}

// TestRunOnAFolderWithoutAContract: every check that can run says why it
// failed, the first failure is kept with its exit code, and no path of the
// folder checked is left in the messages.
func TestRunOnAFolderWithoutAContract(t *testing.T) {
	dir := t.TempDir()
	rep, err := Run(context.Background(), Options{Repo: dir})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Fails < 2 || rep.First == nil || exit.Code(rep.First) != exit.CannotJudge {
		t.Fatalf("report %+v, want the gate file and the base to fail", rep)
	}
	var names []string
	for _, r := range rep.Results {
		names = append(names, string(r.Status)+" "+r.Name)
		if r.Status == Fail && (r.Err == nil || strings.Contains(r.Detail, dir+"/")) {
			t.Errorf("%s: detail %q, err %v", r.Name, r.Detail, r.Err)
		}
	}
	if got := strings.Join(names, ", "); !strings.HasPrefix(got, "FAIL head gate file, FAIL base") {
		t.Errorf("results %s", got)
	}
	if !errors.Is(rep.First, rep.Results[0].Err) {
		t.Errorf("first %v is not the first result's %v", rep.First, rep.Results[0].Err)
	}
}

// fixture reads testdata/check/repo, a whole gate contract whose checks
// all pass, as path -> content.
func fixture(t *testing.T) map[string]string {
	t.Helper()
	return gittest.Files(t, filepath.Join("..", "..", "testdata", "check", "repo"))
}

// result is the check named name, failing the test when there is none.
func result(t *testing.T, rep *Report, name string) Result {
	t.Helper()
	for _, r := range rep.Results {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no %q check among %+v", name, rep.Results)
	return Result{}
}

// TestReleaseLanesSkipByTheResolversRule: the workflow_dispatch and
// release lanes are skipped exactly when the resolver finds no previous
// release, whatever the tags' names look like; and a --tag that exists on
// another commit than HEAD is refused rather than judged in HEAD's place.
func TestReleaseLanesSkipByTheResolversRule(t *testing.T) {
	t.Parallel()
	type lane struct {
		status Status
		says   string
	}
	for _, tc := range []struct {
		name   string
		before []string // tags on the commit before HEAD
		head   string   // HEAD's tag
		tag    string   // Options.Tag
		want   map[string]lane
	}{
		{"only a pre-release, a partial version and a name before HEAD", []string{"v0.1.0-rc.1", "v1.2", "vnext"}, "v2.0.0", "", map[string]lane{
			"base for workflow_dispatch": {Skip, "no release tag"},
			"base for release":           {Skip, "no release tag"},
		}},
		{"releases tagged without the v", []string{"1.2.0"}, "1.3.0", "", map[string]lane{
			"base for workflow_dispatch": {OK, "the previous release 1.2.0."},
			"base for release":           {OK, "the previous release 1.2.0."},
		}},
		{"--tag on another commit than HEAD", []string{"v1.0.0"}, "v1.1.0", "v1.0.0", map[string]lane{
			"base for workflow_dispatch": {OK, "the previous release v1.0.0."},
			"base for release":           {Fail, "the release's tag v1.0.0 is on"},
		}},
		{"--tag not created yet counts as HEAD's", []string{"v1.0.0"}, "", "v1.1.0", map[string]lane{
			"base for release": {OK, "the previous release v1.0.0."},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := gittest.New(t)
			r.Commit("the gate", fixture(t))
			for _, tag := range tc.before {
				r.Tag(tag, "HEAD", true)
			}
			r.Commit("head", map[string]string{"svc.sh": "#!/bin/sh\nexit 1\n"})
			if tc.head != "" {
				r.Tag(tc.head, "HEAD", true)
			}
			rep, err := Run(context.Background(), Options{Repo: r.Dir, Tag: tc.tag})
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				got := result(t, rep, name)
				if got.Status != want.status || !strings.Contains(got.Detail, want.says) {
					t.Errorf("%s", got.Line())
					t.Errorf("want %s mentioning %q", want.status, want.says)
				}
				if got.Status == Fail && exit.Code(got.Err) != exit.CannotJudge {
					t.Errorf("%s: exit %d, want 2", name, exit.Code(got.Err))
				}
			}
		})
	}
}

// TestRewriteWithGenerate: a contract that generates files with each
// arm's services (generate) hands the base its addresses there, so a
// config naming a moved port under another host, or not at all, is no
// longer refused; an override naming the head's address still is, since
// the generated file does not change what the override sets. Without
// generate all three are refused.
func TestRewriteWithGenerate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		file, old, new string
		withGenerate   string // what the refusal names with generate ("" passes)
		without        string // and without
	}{
		{"the port under another host", "perf/service.toml", `"postgres://127.0.0.1:15432/app"`, `"postgres://db.internal:15432/app"`,
			"", "perf/service.toml:3: names db's port 15432 as db.internal:15432"},
		{"no address of the moved service", "perf/service.toml", "database = \"postgres://127.0.0.1:15432/app\"\n", "",
			"", "compose.yaml:5: the base's copy of db publishes port 15432 on 127.0.0.2, but perf/service.toml names no 127.0.0.1:15432"},
		{"an override naming the address", "perf/arm.env", "SVC__LOG=info\n", "SVC__LOG=info\nSVC__DATABASE=postgres://localhost:15432/app\n",
			"perf/arm.env:3: SVC__DATABASE names localhost:15432", "perf/arm.env:3: SVC__DATABASE names localhost:15432"},
	} {
		for _, generate := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s, generate %v", tc.name, generate), func(t *testing.T) {
				t.Parallel()
				files := fixture(t)
				want := tc.without
				if generate {
					want = tc.withGenerate
					files["perf/gate.toml"] = strings.Replace(files["perf/gate.toml"], "plan = \"perf/plan.toml\"\n", "plan = \"perf/plan.toml\"\ngenerate = [\"registry.toml\"]\n", 1)
					files["perf/service.toml"] = "registry = \"@DIR@/registry.toml\"\n" + files["perf/service.toml"]
				}
				if !strings.Contains(files[tc.file], tc.old) {
					t.Fatalf("%s does not hold %q", tc.file, tc.old)
				}
				files[tc.file] = strings.Replace(files[tc.file], tc.old, tc.new, 1)
				// The base pins postgres:14 and the head moves to 15, so
				// the base gets its own copy of db on 127.0.0.2.
				head := files["compose.yaml"]
				files["compose.yaml"] = strings.Replace(head, "postgres:15", "postgres:14", 1)
				r := gittest.New(t)
				baseCommit := r.Commit("base", files)
				r.Commit("head: postgres 15", map[string]string{"compose.yaml": head})
				rep, err := Run(context.Background(), Options{Repo: r.Dir})
				if err != nil {
					t.Fatal(err)
				}
				got := result(t, rep, "base "+event.ShortSHA(baseCommit)+" config rewrite")
				if want == "" {
					if got.Status != OK || rep.Fails != 0 {
						t.Errorf("%s, %d failure(s) (first: %v), want every check to pass", got.Line(), rep.Fails, rep.First)
					}
					return
				}
				if got.Status != Fail || !strings.HasPrefix(got.Detail, want) || exit.Code(got.Err) != exit.CannotJudge {
					t.Errorf("%s, want FAIL (exit 2) starting %q", got.Line(), want)
				}
			})
		}
	}
}
