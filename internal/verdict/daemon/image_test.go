package daemon_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// TestImage builds Dockerfile.verdictd from a static binary built here
// (no registry: the prebuilt target), runs it with its port published on
// loopback, and reads /healthz and /readyz from it. Image and container
// are removed in Cleanup.
func TestImage(t *testing.T) {
	testtier.Heavy(t, testtier.Docker)
	// go test runs a package's tests in its folder; the file's own path
	// is no guide under -trimpath (.ci/test sets it).
	root := filepath.Join("..", "..", "..")
	ctxDir := t.TempDir()
	pre := filepath.Join(ctxDir, "prebuilt")
	if err := os.MkdirAll(filepath.Join(pre, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(pre, "perfgate-verdictd"), "github.com/perfgate/perfgate/cmd/perfgate-verdictd")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building a static perfgate-verdictd: %v\n%s", err, out)
	}
	ca, err := os.ReadFile("/etc/ssl/certs/ca-certificates.crt")
	if err != nil {
		t.Fatalf("the CA bundle (apt-get install ca-certificates): %v", err)
	}
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile.verdictd"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{filepath.Join(pre, "ca-certificates.crt"): ca, filepath.Join(ctxDir, "Dockerfile.verdictd"): df} {
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tag := fmt.Sprintf("perfgate-verdictd-test:%d", os.Getpid())
	cmd := exec.Command("docker", "build", "-q", "-f", "Dockerfile.verdictd", "--target", "prebuilt", "-t", tag, ".")
	cmd.Dir = ctxDir
	cmd.Env = append(os.Environ(), "DOCKER_BUILDKIT=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker build -f Dockerfile.verdictd: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command("docker", "rmi", "-f", tag).Run() })
	out, err := exec.Command("docker", "run", "-d", "--rm", "-p", "127.0.0.1::8088", tag).Output()
	if err != nil {
		t.Fatalf("docker run: %v", err)
	}
	id := strings.TrimSpace(string(out))
	// The volume check is registered first, so it runs after the
	// removal; both before the inspect, so a failed inspect still
	// removes the container.
	var vols []byte
	t.Cleanup(func() {
		for _, v := range strings.Fields(string(vols)) {
			if exec.Command("docker", "volume", "inspect", v).Run() == nil {
				t.Errorf("the container's volume %s is left on the engine", v)
				exec.Command("docker", "volume", "rm", "-f", v).Run()
			}
		}
	})
	// -v: the image declares VOLUME /data, and a container removed by
	// force, not by its --rm on exit, keeps its anonymous volume without
	// it (one left on the engine by every run of the suite).
	t.Cleanup(func() { exec.Command("docker", "rm", "-f", "-v", id).Run() })
	if vols, err = exec.Command("docker", "inspect", "-f", `{{range .Mounts}}{{.Name}} {{end}}`, id).Output(); err != nil {
		t.Fatalf("docker inspect: %v", err)
	}
	port, err := exec.Command("docker", "port", id, "8088/tcp").Output()
	if err != nil {
		t.Fatalf("docker port: %v", err)
	}
	addr := strings.TrimSpace(strings.Split(string(port), "\n")[0])
	deadline := time.Now().Add(30 * time.Second)
	for _, path := range []string{"/healthz", "/readyz"} {
		for {
			resp, err := http.Get("http://" + addr + path)
			if err == nil {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == 200 {
					break
				}
				err = fmt.Errorf("%d %s", resp.StatusCode, b)
			}
			if time.Now().After(deadline) {
				logs, _ := exec.Command("docker", "logs", id).CombinedOutput()
				t.Fatalf("%s from the container: %v\n%s", path, err, logs)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	user, err := exec.Command("docker", "inspect", "-f", "{{.Config.User}}", tag).Output()
	if err != nil || strings.TrimSpace(string(user)) != "65534:65534" {
		t.Errorf("the image runs as %q (%v), want 65534:65534", user, err)
	}
}
