package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/testtier"
)

// A base tree that predates arm.env and whose legacy function sets a
// variable its gate file's [env] fixes is refused before any of the run's
// services starts: it was once refused only after its compose projects were
// up. (A function that sets nothing is refused earlier still, by prepare.) The compose service
// names an image nobody built, so a run that tried to start it would fail
// on that instead, and name no legacy function.
func TestRunRefusesLegacyOverridesBeforeServices(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	// The suite needs a docker engine (README, "What the tests need"): a
	// missing one fails here rather than passing unseen.
	if out, err := exec.Command("docker", "version", "--format", "{{.Server.Version}}").CombinedOutput(); err != nil {
		t.Fatalf("no docker engine answers: %v\n%s", err, out)
	}
	useExampled(t)
	const compose = "services:\n  never:\n    image: perfgate-test/never-built:none\n    ports:\n      - \"127.0.0.1:39999:80\"\n"
	legacyBase := exampleTree("")
	delete(legacyBase, "perf/arm.env")
	legacyBase["perf/gate.toml"] += "compose = [\"perf/compose.yaml\"]\n\n[legacy]\nscript = \"scripts/gate.sh\"\nfunction = \"gateway_env\"\n\n[env]\nEXAMPLED_LATENCY = \"2ms\"\n"
	legacyBase["scripts/gate.sh"] = "#!/usr/bin/env bash\ngateway_env() {\n\techo \"EXAMPLED_LATENCY=1ms\"\n}\n"
	legacyBase["perf/compose.yaml"] = compose
	head := exampleTree("EXAMPLED_LATENCY=1ms\n")
	head["perf/gate.toml"] += "compose = [\"perf/compose.yaml\"]\n"
	head["perf/compose.yaml"] = compose

	r := gittest.New(t)
	r.Git("checkout", "-q", "-b", "main")
	r.Commit("legacy gate", legacyBase)
	r.Git("checkout", "-q", "-b", "change")
	r.Commit("arm.env", head)

	target := filepath.Join(t.TempDir(), "target")
	if _, stderr, err := runBaseCLI(t, nil, "prepare", "--event", "pull_request", "--base-ref", "main", "--repo", r.Dir, "--out", target); err != nil {
		t.Fatalf("perfgate prepare: %v\n%s", err, stderr)
	}
	_, stderr, err := runBaseCLI(t, nil, "run", "--target", target, "--repo", r.Dir, "--store=false",
		"--pairs", "1", "--warmup", "500ms", "--measure", "1s", "--rate", "5", "--idle", "0")
	if exit.Code(err) != exit.CannotJudge || err == nil || !strings.Contains(err.Error(), "gateway_env") {
		t.Fatalf("perfgate run over a base whose legacy function sets what [env] fixes: exit %d (%v), want 2 naming gateway_env\n%s", exit.Code(err), err, stderr)
	}
	if _, serr := os.Stat(filepath.Join(target, "perf-run", "services")); serr == nil {
		t.Errorf("the run started services before refusing the base's overrides:\n%s", stderr)
	}
}
