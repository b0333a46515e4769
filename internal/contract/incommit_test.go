package contract

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// gitRepo runs git in dir, failing the test with git's output.
func gitRun(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s (install git)", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// commitTree replaces the repository's files with files and commits them.
func commitTree(t *testing.T, repo string, files map[string]string) string {
	t.Helper()
	entries, _ := os.ReadDir(repo)
	for _, e := range entries {
		if e.Name() != ".git" {
			os.RemoveAll(filepath.Join(repo, e.Name()))
		}
	}
	for p, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, "*") {
			p, mode = strings.TrimSuffix(p, "*"), 0o755
		}
		full := filepath.Join(repo, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, repo, "add", "-A")
	gitRun(t, repo, "commit", "-q", "--allow-empty", "-m", "c")
	return gitRun(t, repo, "rev-parse", "HEAD")
}

func TestInCommit(t *testing.T) {
	repo := t.TempDir()
	gitRun(t, repo, "init", "-q", "-b", "main")
	modern := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")
	legacyFiles := func(script string) map[string]string {
		f := map[string]string{}
		for k, v := range modern {
			f[k] = v
		}
		delete(f, "perf/arm.env")
		f[GateFile] += "\n[legacy]\nscript = \"scripts/perf/gate.sh\"\nfunction = \"gateway_env\"\n"
		f["scripts/perf/gate.sh*"] = script
		return f
	}
	tests := []struct {
		name  string
		files map[string]string
		ok    bool
		why   string
	}{
		{"no gate file", map[string]string{"README": "hi\n"}, false, "carries no perf/gate.toml"},
		{"gate file and arm.env", modern, true, ""},
		{"legacy function setting overrides", legacyFiles(legacyGate + "\ngateway_env() { echo SVC__A=1; }\n"), true, ""},
		{"legacy function setting nothing", legacyFiles("gateway_env() { :; }\n"), false,
			"carries neither perf/arm.env nor a scripts/perf/gate.sh whose gateway_env() sets a gateway's overrides"},
		{"gate file without either", func() map[string]string {
			f := legacyFiles("")
			delete(f, "scripts/perf/gate.sh*")
			return f
		}(), false, "carries neither perf/arm.env nor a scripts/perf/gate.sh whose gateway_env() sets a gateway's overrides"},
		// Load reads these paths through the file system, which cleans
		// them; the commit's tree must find the same files.
		{"paths written with ./ and //", func() map[string]string {
			f := map[string]string{}
			for k, v := range modern {
				f[k] = v
			}
			f[GateFile] = replace(f[GateFile], `config = "perf/service.toml"`, "config = \"./perf/service.toml\"\noverrides = \"perf//arm.env\"")
			return f
		}(), true, ""},
		{"gate file that does not parse", map[string]string{GateFile: "build = \n"}, false, "carries a perf/gate.toml that does not parse"},
	}
	r := func() *git.Repository {
		r, err := git.PlainOpen(repo)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hash := commitTree(t, repo, tt.files)
			commit, err := r().CommitObject(plumbing.NewHash(hash))
			if err != nil {
				t.Fatal(err)
			}
			ok, why, err := InCommit(commit)
			if err != nil {
				t.Fatal(err)
			}
			if ok != tt.ok || !strings.Contains(why, tt.why) {
				t.Errorf("InCommit = %v, %q; want %v, %q", ok, why, tt.ok, tt.why)
			}
		})
	}
}
