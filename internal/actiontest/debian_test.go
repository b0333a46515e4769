package actiontest

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// debianSuite is the Debian release the action's image is built on:
// trixie (13), whose docker.io (26.1, API 1.45) and docker-compose (2.26,
// the compose v2 plugin) speak to Docker Engine 29, which refuses clients
// under API 1.44; bookworm's are 20.10 (API 1.41) and 1.29. The machine's
// mirror serves it, and bookworm's debootstrap has its script.
const debianSuite = "trixie"

// debianBaseTag names the Debian base image the tests build the action's
// image on. There is no image registry on the test machines, so it is made
// from Debian packages once per machine and then found by its tag.
const debianBaseTag = "perfgate-test/debian:" + debianSuite + "-minbase"

// debianBase returns the tag of a minimal Debian image, making it
// with debootstrap and docker import when the engine does not have it yet.
// A lock file keeps two test processes from making it at once.
func debianBase(t *testing.T) string {
	t.Helper()
	if imageExists(debianBaseTag) {
		return debianBaseTag
	}
	defer lockMachineWide(t, "perfgate-debian-base.lock", "the Debian base build")()
	if imageExists(debianBaseTag) {
		return debianBaseTag
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		run(t, 5*time.Minute, "apt-get", "install", "-y", "-qq", "debootstrap")
	}
	mirror := debianMirror(t, "/etc/apt/sources.list.d/debian.sources")
	dir := t.TempDir()
	start := time.Now()
	run(t, 10*time.Minute, "debootstrap", "--variant=minbase", debianSuite, dir, mirror)
	cmd := exec.Command("bash", "-c", `tar -C "$1" -c . | docker import - "$2"`, "import", dir, debianBaseTag)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker import of the Debian base: %v\n%s", err, out)
	}
	t.Logf("made the Debian base image %s in %s", debianBaseTag, time.Since(start).Round(time.Second))
	return debianBaseTag
}

// lockMachineWide takes an exclusive lock on a file in the temp folder,
// waiting while another test process holds it, and returns its release.
// The images are made once per machine by whichever process comes first;
// the others wait and then find them.
func lockMachineWide(t *testing.T, name, what string) (release func()) {
	t.Helper()
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), name), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatalf("locking %s: %v", what, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		t.Fatalf("locking %s: %v", what, err)
	}
	return func() { lock.Close() }
}

// debianMirror reads the first URIs of a deb822 sources file whose suites
// include bookworm: the machine's own apt mirror, which serves trixie too.
func debianMirror(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the apt mirror: %v", err)
	}
	defer f.Close()
	var uri string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			uri = ""
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "URIs":
			uri = strings.Fields(v)[0]
		case "Suites":
			if uri != "" && strings.Contains(" "+v+" ", " bookworm ") {
				return uri
			}
		}
	}
	t.Fatalf("%s names no URIs for the bookworm suite", path)
	return ""
}

func imageExists(tag string) bool {
	return exec.Command("docker", "image", "inspect", tag).Run() == nil
}

// run runs a command to completion within limit, failing the test with its
// output.
func run(t *testing.T, limit time.Duration, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	timer := time.AfterFunc(limit, func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestDebianBase(t *testing.T) {
	testtier.Heavy(t, testtier.Debootstrap)
	tag := debianBase(t)
	out := run(t, time.Minute, "docker", "run", "--rm", tag, "cat", "/etc/debian_version")
	if !strings.HasPrefix(strings.TrimSpace(out), "13.") {
		t.Errorf("the base image is not trixie (13): /etc/debian_version says %q", out)
	}
}
