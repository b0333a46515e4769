package contract

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// A built pair packed on the build runner and unpacked on a fresh one renders
// and checks without building: same files, same modes, symlinks kept, and the
// base's build output left behind.
func TestPackUnpackRoundTrip(t *testing.T) {
	ctx := context.Background()
	build := t.TempDir()
	for _, arm := range []string{BaseArm, HeadArm} {
		files := serviceTree(t, "server.port,usage.enabled,a", "[server]\nport = @PORT@\n", "SVC__A=1\n")
		files["scripts/run.sh*"] = "#!/bin/sh\n"
		tree := writeTree(t, files)
		if arm == BaseArm {
			tree = filepath.Join(build, BaseArm, TreeDir)
			if err := os.CopyFS(tree, os.DirFS(writeTree(t, files))); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("scripts/run.sh", filepath.Join(tree, "run")); err != nil {
				t.Fatal(err)
			}
			if err := WriteTreeManifest(filepath.Join(build, BaseArm)); err != nil {
				t.Fatal(err)
			}
		}
		c, err := Load(tree)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.BuildArm(ctx, filepath.Join(build, arm), new(discard)); err != nil {
			t.Fatal(err)
		}
	}
	archive := filepath.Join(t.TempDir(), "arms.tar.gz")
	if err := Pack(build, archive); err != nil {
		t.Fatal(err)
	}
	attempt := t.TempDir()
	if err := Unpack(archive, attempt); err != nil {
		t.Fatal(err)
	}

	checks := []struct {
		path string
		mode os.FileMode
		link string
	}{
		{BaseArm + "/bin/svc", 0o755, ""},
		{HeadArm + "/bin/svc", 0o755, ""},
		{BaseArm + "/contract/perf/gate.toml", 0o644, ""},
		{HeadArm + "/contract/perf/arm.env", 0o644, ""},
		{BaseArm + "/tree/scripts/run.sh", 0o755, ""},
		{BaseArm + "/tree/perf/service.toml", 0o644, ""},
		{BaseArm + "/tree/run", 0, "scripts/run.sh"},
	}
	for _, c := range checks {
		fi, err := os.Lstat(filepath.Join(attempt, c.path))
		if err != nil {
			t.Errorf("unpacked arms lack %s: %v", c.path, err)
			continue
		}
		if c.link != "" {
			got, err := os.Readlink(filepath.Join(attempt, c.path))
			if err != nil || got != c.link {
				t.Errorf("%s links to %q (%v), want %q", c.path, got, err, c.link)
			}
			continue
		}
		if fi.Mode().Perm() != c.mode {
			t.Errorf("%s has mode %v, want %v", c.path, fi.Mode().Perm(), c.mode)
		}
	}
	// bin/svc in the base's tree is the build's output, not the tree's.
	if _, err := os.Stat(filepath.Join(attempt, BaseArm, TreeDir, "bin", "svc")); err == nil {
		t.Error("the base tree's build output was packed")
	}
	for _, arm := range []string{BaseArm, HeadArm} {
		c, err := LoadArm(filepath.Join(attempt, arm))
		if err != nil {
			t.Fatal(err)
		}
		a, err := c.Render(ctx, RenderOptions{Port: freePort(t), Dir: filepath.Join(attempt, "run", arm)})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CheckConfig(ctx, a, arm); err != nil {
			t.Errorf("the unpacked %s refused its config: %v", arm, err)
		}
	}

	// A second unpack replaces the arms rather than mixing them.
	if err := os.WriteFile(filepath.Join(attempt, HeadArm, "stale"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Unpack(archive, attempt); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(attempt, HeadArm, "stale")); err == nil {
		t.Error("unpack kept a file the archive does not hold")
	}
}

func TestUnpackRefusals(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "arms.tar.gz")
	if err := os.WriteFile(notGzip, []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, Unpack(notGzip, filepath.Join(dir, "target")), "not an archive `perfgate pack` wrote")
	wantRefusal(t, Unpack(filepath.Join(dir, "missing.tar.gz"), filepath.Join(dir, "target")), "download the arms artifact")
	wantRefusal(t, Pack(filepath.Join(dir, "empty"), filepath.Join(dir, "out.tar.gz")), "run `perfgate prepare` first")
}
