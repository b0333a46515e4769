package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/base/gittest"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/exit"
)

// prepareTree is a tree whose "service" is a shell script that knows the
// given config keys and refuses any other, as a strict config check does.
func prepareTree(known, config string) map[string]string {
	return map[string]string{
		"perf/gate.toml": `build = "mkdir -p bin && install -m 0755 svc.sh bin/svc"
binary = "bin/svc"
start = "@BIN@ serve"
check = "@BIN@ check"
config = "perf/service.toml"
config_env = "SVC_CONFIG"
prefix = "SVC__"
ready = "/health"
`,
		"svc.sh": `#!/bin/sh
for k in $(sed -n 's/^\([a-z_]*\) *=.*/\1/p' "$SVC_CONFIG"); do
	case " ` + known + ` " in *" $k "*) ;; *) echo "error: unknown key \"$k\"" >&2; exit 1 ;; esac
done
echo "config ok"
`,
		"perf/service.toml": config,
		"perf/arm.env":      "SVC__LOG=info\n",
	}
}

// A pull request renames threshold to limit. prepare picks the merge base,
// builds each arm from its own tree, keeps each contract beside its binary,
// and the arms survive a pack/unpack onto a fresh folder.
func TestPrepareEndToEnd(t *testing.T) {
	r := gittest.New(t)
	r.Git("checkout", "-q", "-b", "main")
	baseCommit := r.Commit("gate", prepareTree("port threshold", "port = @PORT@\nthreshold = 5\n"))
	r.Git("checkout", "-q", "-b", "rename")
	r.Commit("rename threshold", prepareTree("port limit", "port = @PORT@\nlimit = 5\n"))
	r.Git("checkout", "-q", "main")
	r.Commit("main moves on", map[string]string{"README": "later\n"})
	r.Git("checkout", "-q", "rename")

	target := filepath.Join(t.TempDir(), "target")
	stdout, stderr, err := runBaseCLI(t, nil, "prepare", "--event", "pull_request", "--base-ref", "main", "--repo", r.Dir, "--out", target)
	if err != nil {
		t.Fatalf("perfgate prepare: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, baseCommit) {
		t.Errorf("prepare does not name the merge base %s:\n%s", baseCommit, stdout)
	}
	md, err := os.ReadFile(filepath.Join(target, "perf-base", "base.md"))
	if err != nil || !strings.Contains(string(md), "- commit: `"+baseCommit+"`") {
		t.Fatalf("base.md = %q, %v", md, err)
	}

	archive := filepath.Join(t.TempDir(), "arms.tar.gz")
	if _, stderr, err := runBaseCLI(t, nil, "pack", "--dir", target, "--out", archive); err != nil {
		t.Fatalf("perfgate pack: %v\n%s", err, stderr)
	}
	attempt := filepath.Join(t.TempDir(), "target")
	if _, stderr, err := runBaseCLI(t, nil, "unpack", "--in", archive, "--dir", attempt); err != nil {
		t.Fatalf("perfgate unpack: %v\n%s", err, stderr)
	}

	wantKey := map[string]string{contract.BaseArm: "threshold = 5", contract.HeadArm: "limit = 5"}
	for _, dir := range []string{target, attempt} {
		for arm, key := range wantKey {
			c, err := contract.LoadArm(filepath.Join(dir, arm))
			if err != nil {
				t.Fatal(err)
			}
			a, err := c.Render(context.Background(), contract.RenderOptions{Port: 8070, Dir: filepath.Join(t.TempDir(), arm)})
			if err != nil {
				t.Fatal(err)
			}
			cfg, _ := os.ReadFile(a.ConfigPath)
			if !strings.Contains(string(cfg), key) {
				t.Errorf("%s in %s renders %q, want its own key %q", arm, dir, cfg, key)
			}
			if err := c.CheckConfig(context.Background(), a, baseCommit); err != nil {
				t.Errorf("%s in %s refuses its own config: %v", arm, dir, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(attempt, contract.BaseArm, contract.TreeDir, "svc.sh")); err != nil {
		t.Errorf("the unpacked base lacks its tree: %v", err)
	}
}

func TestPrepareRefusals(t *testing.T) {
	t.Run("head without a contract", func(t *testing.T) {
		r := gittest.New(t)
		r.Git("checkout", "-q", "-b", "main")
		r.Commit("root", map[string]string{"README": "x\n"})
		_, _, err := runBaseCLI(t, nil, "prepare", "--event", "push", "--before", "HEAD", "--repo", r.Dir, "--out", filepath.Join(t.TempDir(), "target"))
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "perf/gate.toml: not found") {
			t.Fatalf("got %v, want exit 2 naming perf/gate.toml", err)
		}
	})
	t.Run("base that does not build", func(t *testing.T) {
		r := gittest.New(t)
		r.Git("checkout", "-q", "-b", "main")
		broken := prepareTree("port", "port = @PORT@\n")
		broken["perf/gate.toml"] = strings.Replace(broken["perf/gate.toml"], "install -m 0755 svc.sh bin/svc", "exit 7", 1)
		before := r.Commit("broken build", broken)
		r.Commit("fixed build", prepareTree("port", "port = @PORT@\n"))
		target := filepath.Join(t.TempDir(), "target")
		_, _, err := runBaseCLI(t, nil, "prepare", "--event", "push", "--before", before, "--repo", r.Dir, "--out", target)
		if exit.Code(err) != exit.CannotJudge || !strings.Contains(err.Error(), "building the base at "+before[:12]) {
			t.Fatalf("got %v, want exit 2 naming the base's build", err)
		}
		if _, err := os.Stat(filepath.Join(target, "perf-base", "bin")); err == nil {
			t.Error("a half-built base arm was left behind")
		}
		if _, err := os.Stat(filepath.Join(target, "perf-base", "base.md")); err != nil {
			t.Errorf("base.md, which names the base resolved, is gone: %v", err)
		}
	})
}

// The previous release's gate names a legacy script whose function sets
// nothing, so it carries no contract: the base is the oldest later commit
// that does, and base.md says why in the release notes' words.
func TestPrepareReleaseBaseAfterContractlessTag(t *testing.T) {
	r := gittest.New(t)
	r.Git("checkout", "-q", "-b", "main")
	old := prepareTree("port", "port = @PORT@\n")
	delete(old, "perf/arm.env")
	old["perf/gate.toml"] += "\n[legacy]\nscript = \"scripts/perf/gate.sh\"\nfunction = \"gateway_env\"\n"
	old["scripts/perf/gate.sh"] = "gateway_env() { echo RUST_LOG=info; }\n"
	r.Commit("0.0.16", old)
	r.Tag("v0.0.16", "HEAD", true)
	fixed := prepareTree("port", "port = @PORT@\n")
	fixed["scripts/perf/gate.sh"] = ""
	withContract := r.Commit("arm.env", fixed)
	r.Commit("more", map[string]string{"README": "x\n"})
	r.Tag("v0.0.17", "HEAD", true)

	target := filepath.Join(t.TempDir(), "target")
	_, stderr, err := runBaseCLI(t, nil, "prepare", "--event", "release", "--tag", "v0.0.17", "--repo", r.Dir, "--out", target)
	if err != nil {
		t.Fatalf("perfgate prepare: %v\n%s", err, stderr)
	}
	md, _ := os.ReadFile(filepath.Join(target, "perf-base", "base.md"))
	want := "Performance: The base is `" + withContract + "`, the oldest commit after v0.0.16 that carries the gate contract, since v0.0.16 carries neither perf/arm.env nor a scripts/perf/gate.sh whose gateway_env() sets a gateway's overrides."
	if !strings.Contains(string(md), want) {
		t.Errorf("base.md:\n%s\nwant the line\n%s", md, want)
	}
}
