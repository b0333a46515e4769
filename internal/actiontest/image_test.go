package actiontest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// actionVersion is the version the test image is built as; `perfgate
// version` in it must print it.
const actionVersion = "v0.0.0-actiontest"

// actionImageTag is the image the end-to-end tests run, built from the
// repository's Dockerfile on the Debian base with a perfgate built here.
const actionImageTag = "perfgate-test/action:" + actionVersion

var image struct {
	once  sync.Once
	tag   string
	took  time.Duration
	err   string
	build string // the build's output, for a failure
}

// actionImage builds the action's image once per test process: the
// repository's own Dockerfile, both base images given as build arguments
// (the Debian base made from packages), and a perfgate built on this
// machine with its version stamped by -ldflags -X, carried in the build
// context as prebuilt/perfgate.
func actionImage(t *testing.T) string {
	t.Helper()
	image.once.Do(func() {
		base := debianBase(t)
		// .ci/test builds the image in a process of its own beside the
		// tests that use it: they wait for that build here, and theirs is
		// then the docker cache's, not a second install of the packages.
		defer lockMachineWide(t, "perfgate-action-image.lock", "the action's image build")()
		root := moduleRoot(t)
		ctxDir := t.TempDir()
		bin := filepath.Join(ctxDir, "prebuilt", "perfgate")
		start := time.Now()
		gobuild := exec.Command("go", "build", "-trimpath",
			"-ldflags", "-s -w -X github.com/perfgate/perfgate/internal/cli.Version="+actionVersion,
			"-o", bin, "./cmd/perfgate")
		gobuild.Dir = root
		gobuild.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := gobuild.CombinedOutput(); err != nil {
			image.err, image.build = "building perfgate: "+err.Error(), string(out)
			return
		}
		df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
		if err != nil {
			image.err = err.Error()
			return
		}
		if err := os.WriteFile(filepath.Join(ctxDir, "Dockerfile"), df, 0o644); err != nil {
			image.err = err.Error()
			return
		}
		// The tag is fixed, so each new tree's build leaves the image it
		// moves the tag from untagged: about one perfgate layer (47 MB) a
		// tree, which a developer's machine gathered run after run. That
		// image is removed once the new one holds the tag; not by force, so
		// one a container still runs stays.
		before, _ := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", actionImageTag).Output()
		build := exec.Command("docker", "build", "-q",
			"--build-arg", "BUILD_IMAGE="+base, "--build-arg", "BASE_IMAGE="+base,
			"--build-arg", "VERSION="+actionVersion, "-t", actionImageTag, ctxDir)
		out, err := build.CombinedOutput()
		if err != nil {
			image.err, image.build = "docker build: "+err.Error(), string(out)
			return
		}
		image.tag, image.took = actionImageTag, time.Since(start)
		after, _ := exec.Command("docker", "image", "inspect", "--format", "{{.Id}}", actionImageTag).Output()
		if old, now := strings.TrimSpace(string(before)), strings.TrimSpace(string(after)); old != "" && now != "" && old != now {
			_ = exec.Command("docker", "image", "rm", old).Run()
		}
	})
	if image.err != "" {
		t.Fatalf("building the action's image: %s\n%s", image.err, image.build)
	}
	t.Logf("the action's image %s: built in %s (perfgate compiled here; the Debian packages layer is reused from the docker cache while the Dockerfile's install step is unchanged)", image.tag, image.took.Round(100*time.Millisecond))
	return image.tag
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("finding the module root: %v", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out)))
}

// The built image prints the version it was built as, both called directly
// and through the action's entrypoint (tini, perfgate action).
func TestImageVersion(t *testing.T) {
	testtier.Heavy(t, testtier.Debootstrap)
	tag := actionImage(t)
	direct := run(t, time.Minute, "docker", "run", "--rm", "--entrypoint", "/usr/local/bin/perfgate", tag, "version")
	if strings.TrimSpace(direct) != "perfgate "+actionVersion {
		t.Errorf("perfgate version in the image printed %q, want %q", direct, "perfgate "+actionVersion)
	}
	viaAction := run(t, time.Minute, "docker", "run", "--rm", tag, "version", "")
	if !strings.Contains(viaAction, "perfgate "+actionVersion) {
		t.Errorf("the entrypoint's version printed %q", viaAction)
	}
	// The tools the gate drives are in the image, compose as the v2 plugin.
	tools := run(t, time.Minute, "docker", "run", "--rm", "--entrypoint", "bash", tag, "-c",
		"git --version && docker --version && docker compose version && ls /usr/lib/postgresql/*/bin/initdb && tini --version")
	for _, want := range []string{"git version", "Docker version", "/bin/initdb", "tini version"} {
		if !strings.Contains(tools, want) {
			t.Errorf("the image lacks %s:\n%s", want, tools)
		}
	}
	if !regexp.MustCompile(`Docker Compose version v?2\.`).MatchString(tools) {
		t.Errorf("the image lacks compose v2 (the docker compose plugin):\n%s", tools)
	}
}

// The image's docker CLI speaks API 1.44 or newer, which Docker Engine 29
// requires of its clients, and negotiates down to this machine's older
// engine: against the mounted socket it reads the server's version.
func TestImageDockerClientAPI(t *testing.T) {
	testtier.Heavy(t, testtier.Debootstrap)
	tag := actionImage(t)
	got := strings.Fields(run(t, time.Minute, "docker", "run", "--rm", "-v", "/var/run/docker.sock:/var/run/docker.sock",
		"--entrypoint", "docker", tag, "version", "--format", "{{.Client.DefaultAPIVersion}} {{.Client.APIVersion}} {{.Server.APIVersion}}"))
	if len(got) != 3 {
		t.Fatalf("docker version printed %q, want three API versions", got)
	}
	out, client, server := got[0], got[1], got[2]
	if !apiAtLeast(out, 1, 44) {
		t.Errorf("the image's docker CLI speaks API %q, want 1.44 or newer (Docker Engine 29 refuses older clients)", out)
	}
	if client != server {
		t.Errorf("against this machine's engine the image's CLI uses API %q, the engine speaks %q: want it negotiated down to the engine's", client, server)
	}
	t.Logf("the image's docker CLI: API %s by default, %s against this engine", out, client)
}

// apiAtLeast reports whether an API version "1.45" is at least major.minor.
func apiAtLeast(v string, major, minor int) bool {
	var a, b int
	if _, err := fmt.Sscanf(v, "%d.%d", &a, &b); err != nil {
		return false
	}
	return a > major || (a == major && b >= minor)
}
