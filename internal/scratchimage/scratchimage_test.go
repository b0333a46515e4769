package scratchimage

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testtier"
)

// docker runs the docker CLI and returns its trimmed output.
func docker(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("docker", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("docker %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// label is a label value no other test process uses, so a listing by it
// sees only this test's images.
func label(t *testing.T) string {
	return fmt.Sprintf("%s-%d-%d", t.Name(), os.Getpid(), time.Now().UnixNano())
}

func removeByLabel(t *testing.T, key, value string) {
	t.Cleanup(func() {
		out, _ := exec.Command("docker", "images", "-aq", "--filter", "label="+key+"="+value).Output()
		for _, id := range strings.Fields(string(out)) {
			_ = exec.Command("docker", "rmi", "-f", id).Run()
		}
	})
}

func hostFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The image holds exactly the files, at their paths and modes, with the
// entrypoint and labels, and rests on no other image.
func TestImportMakesTheImage(t *testing.T) {
	t.Parallel()
	testtier.Heavy(t, testtier.Docker)
	owner := label(t)
	removeByLabel(t, "perfgate.test", owner)
	prog := hostFile(t, "prog", "#!/not/run\n")
	lib := hostFile(t, "lib", "library bytes")
	tag := fmt.Sprintf("perfgate-scratchimage-test:%d", os.Getpid())
	err := Import(context.Background(), Options{
		Tag: tag,
		Files: []File{
			{Path: "/prog", From: prog, Mode: 0o755},
			{Path: "/lib/x86_64-linux-gnu/libc.so.6", From: lib},
		},
		Entrypoint: []string{"/prog", "a \"quoted\" arg"},
		Labels:     map[string]string{"perfgate.test": owner, "perfgate.other": "x=y z"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := docker(t, "image", "inspect", "--format", `{{json .Config.Entrypoint}} {{index .Config.Labels "perfgate.test"}} {{index .Config.Labels "perfgate.other"}} parent={{.Parent}} layers={{len .RootFS.Layers}}`, tag)
	want := `["/prog","a \"quoted\" arg"] ` + owner + ` x=y z parent= layers=1`
	if got != want {
		t.Errorf("the image is\n%s\nwant\n%s", got, want)
	}
	// The files, read back out of a container made (not started) from it.
	id := docker(t, "create", tag)
	t.Cleanup(func() { _ = exec.Command("docker", "rm", "-f", id).Run() })
	out := t.TempDir()
	docker(t, "cp", id+":/lib/x86_64-linux-gnu/libc.so.6", filepath.Join(out, "lib"))
	docker(t, "cp", id+":/prog", filepath.Join(out, "prog"))
	if b, err := os.ReadFile(filepath.Join(out, "lib")); err != nil || string(b) != "library bytes" {
		t.Errorf("the image's /lib/x86_64-linux-gnu/libc.so.6 holds %q (%v), want the library's bytes", b, err)
	}
	if st, err := os.Stat(filepath.Join(out, "prog")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("the image's /prog: %v %v, want mode 0755", st, err)
	}
}

// Two images of the same files, each made while the other's earlier copy
// is being removed, as two demos' builds and teardowns overlap: with
// docker build's shared step images one removal could cut the other's
// build; here every import stands alone and nothing is left behind.
func TestImportBesideRemovals(t *testing.T) {
	t.Parallel()
	testtier.Heavy(t, testtier.Docker)
	owner := label(t)
	removeByLabel(t, "perfgate.test", owner)
	prog := hostFile(t, "prog", strings.Repeat("the same bytes in both images\n", 100000))
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				tag := fmt.Sprintf("perfgate-scratchimage-test:%d-%d-%d", os.Getpid(), w, i)
				if err := Import(context.Background(), Options{Tag: tag, Files: []File{{Path: "/prog", From: prog, Mode: 0o755}},
					Labels: map[string]string{"perfgate.test": owner}}); err != nil {
					errs <- err
					return
				}
				if out, err := exec.Command("docker", "rmi", "-f", tag).CombinedOutput(); err != nil {
					errs <- fmt.Errorf("removing %s: %v: %s", tag, err, out)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if left := docker(t, "images", "-aq", "--filter", "label=perfgate.test="+owner); left != "" {
		t.Errorf("images left behind after every tag was removed: %s", left)
	}
}

// What went wrong is said in the error: docker's own message, or the file
// that could not be read, before docker starts.
func TestImportNamesTheCause(t *testing.T) {
	t.Parallel()
	file := hostFile(t, "f", "x")
	for _, tc := range []struct {
		name   string
		docker bool
		o      Options
		want   string
	}{
		{"missing file", false, Options{Tag: "perfgate-x:1", Files: []File{{Path: "/f", From: "/nonexistent/perfgate-file"}}}, "reading /nonexistent/perfgate-file for its /f"},
		{"relative path", false, Options{Tag: "perfgate-x:1", Files: []File{{Path: "f", From: file}}}, `the file "f": write its path in the image absolute`},
		{"a folder", false, Options{Tag: "perfgate-x:1", Files: []File{{Path: "/f", From: t.TempDir()}}}, "is not a regular file"},
		{"no files", false, Options{Tag: "perfgate-x:1"}, "a tag and at least one file are needed"},
		{"bad tag", true, Options{Tag: "Perfgate-Upper:1", Files: []File{{Path: "/f", From: file}}}, "must be lowercase"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.docker {
				testtier.Heavy(t, testtier.Docker)
			}
			err := Import(context.Background(), tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Import: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
