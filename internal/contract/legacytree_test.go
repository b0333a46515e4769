package contract

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/event"
)

// A release whose previous tag has no contract at all, then a commit from
// before perf/gate.toml whose scripts/perf/gate.sh's gateway_env() sets the
// overrides (FerroFED's older releases), then the head, whose gate file
// declares how to read legacy trees. The release base is that legacy
// commit, the release-notes line is FerroFED's gate's sentence, and the base arm
// builds and renders from the head's gate file over its own tree.
func TestLegacyTreeCarriesTheHeadsContract(t *testing.T) {
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q", "-b", "main")
	modern := serviceTree(t, "server.port,usage.enabled,a", "[server]\nport = @PORT@\n", "SVC__A=1\n")
	commitTree(t, repo, map[string]string{"perf/service.toml": modern["perf/service.toml"], "svc.sh*": modern["svc.sh*"], "compose.yaml": modern["compose.yaml"]})
	gitRun(t, repo, "tag", "v0.0.16")
	legacy := map[string]string{
		"perf/service.toml":     modern["perf/service.toml"],
		"svc.sh*":               modern["svc.sh*"],
		"compose.yaml":          modern["compose.yaml"],
		"perf/plan.toml":        "# plan\n",
		"scripts/perf/gate.sh*": legacyGate + "\ngateway_env() { echo SVC__A=2; }\n",
	}
	legacyCommit := commitTree(t, repo, legacy)
	head := map[string]string{}
	for k, v := range modern {
		head[k] = v
	}
	head[GateFile] += "\n[legacy]\nscript = \"scripts/perf/gate.sh\"\nfunction = \"gateway_env\"\n"
	commitTree(t, repo, head)
	gitRun(t, repo, "tag", "v0.0.18")

	headC, err := Load(repo)
	if err != nil {
		t.Fatal(err)
	}
	r, err := git.PlainOpen(repo)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := r.CommitObject(plumbing.NewHash(legacyCommit))
	if err != nil {
		t.Fatal(err)
	}
	if ok, why, err := InCommit(lc); err != nil || ok {
		t.Fatalf("without the head's [legacy] the legacy commit carries the contract (%v, %q, %v)", ok, why, err)
	}
	if ok, why, err := InCommitWith(headC)(lc); err != nil || !ok {
		t.Fatalf("with the head's [legacy] the legacy commit carries none: %q, %v", why, err)
	}

	choice, err := base.Resolve(context.Background(), repo, &event.Event{Name: event.Release, Tag: "v0.0.18"}, InCommitWith(headC))
	if err != nil {
		t.Fatal(err)
	}
	want := "The base is `" + legacyCommit + "`, the oldest commit after v0.0.16 that carries the gate contract, since v0.0.16 carries neither perf/arm.env nor a scripts/perf/gate.sh whose gateway_env() sets a gateway's overrides."
	if choice.Commit != legacyCommit || choice.Reason != want {
		t.Errorf("release base %s: %q\nwant %s: %q", choice.Commit, choice.Reason, legacyCommit, want)
	}

	// The base arm: the head's gate file over the legacy tree, kept beside
	// its build, its overrides derived from its own gateway_env().
	tree := writeTree(t, legacy)
	baseC, err := LoadBase(tree, headC)
	if err != nil {
		t.Fatal(err)
	}
	armDir := filepath.Join(t.TempDir(), BaseArm)
	if err := baseC.BuildArm(context.Background(), armDir, new(discard)); err != nil {
		t.Fatal(err)
	}
	kept, err := LoadArm(armDir)
	if err != nil {
		t.Fatalf("the kept legacy base: %v", err)
	}
	arm, err := kept.Render(context.Background(), RenderOptions{Port: 8070, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(arm.Env, "SVC__A=2") {
		t.Errorf("the legacy base's overrides are %v, want its own gateway_env()'s SVC__A=2", arm.Env)
	}
	if strings.Contains(strings.Join(arm.Env, " "), "SVC__A=1") {
		t.Errorf("the legacy base reads the head's arm.env: %v", arm.Env)
	}

	// Without [legacy] in the head, a tree without a gate file is refused.
	plain, err := Load(writeTree(t, modern))
	if err != nil {
		t.Fatal(err)
	}
	_, err = LoadBase(tree, plain)
	wantRefusal(t, err, GateFile, "not found")
}
