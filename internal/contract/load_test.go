package contract

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadRefusesBadGateFiles(t *testing.T) {
	good := serviceTree(t, "server.port", "[server]\nport = @PORT@\n", "SVC__A=1\n")
	gate := good[GateFile]
	tests := []struct {
		name  string
		edit  func(files map[string]string)
		parts []string
	}{
		{"no gate file", func(f map[string]string) { delete(f, GateFile) }, []string{"perf/gate.toml: not found", "docs/contract.md"}},
		{"syntax error", func(f map[string]string) { f[GateFile] = gate + "oops = \n" }, []string{"perf/gate.toml:15:"}},
		{"unknown key", func(f map[string]string) {
			f[GateFile] = gate + "\n[legacy]\nscript = \"a.sh\"\nfunction = \"f\"\nshell = \"zsh\"\n"
		}, []string{"perf/gate.toml:19:", `unknown key "legacy.shell"`}},
		{"missing start", func(f map[string]string) { f[GateFile] = replace(gate, "start = \"@BIN@ serve\"\n", "") }, []string{"start is missing"}},
		{"unknown placeholder in start", func(f map[string]string) { f[GateFile] = replace(gate, "@BIN@ serve", "@BIN@ serve --home @HOME@") }, []string{"perf/gate.toml:4:", "@HOME@"}},
		{"shell pipe in check", func(f map[string]string) { f[GateFile] = replace(gate, "@BIN@ check", "@BIN@ check | tee log") }, []string{"perf/gate.toml:5:", "without a shell"}},
		{"ready off loopback", func(f map[string]string) { f[GateFile] = replace(gate, `"/health"`, `"http://10.0.0.1:@PORT@/health"`) }, []string{"perf/gate.toml:9:", "loopback"}},
		// A password with an '@' in it: the URL does not parse, and the
		// refusal names it without its user part.
		{"ready with a password, not a URL", func(f map[string]string) {
			f[GateFile] = replace(gate, `"/health"`, `"http://probe:pa@ss%zz@127.0.0.1:@PORT@/health"`)
		}, []string{"perf/gate.toml:9:", `ready = "http://***@127.0.0.1:@PORT@/health" is not a URL`}},
		{"ready with a password", func(f map[string]string) {
			f[GateFile] = replace(gate, `"/health"`, `"http://probe:s3cret@127.0.0.1:@PORT@/health"`)
		}, []string{"perf/gate.toml:9:", `ready = "http://***@127.0.0.1:@PORT@/health" holds a user name or password`}},
		// A path's placeholders are filled like a URL's: @PORT@ alone.
		{"ready path with @DIR@", func(f map[string]string) { f[GateFile] = replace(gate, `"/health"`, `"/health/@DIR@"`) }, []string{"perf/gate.toml:9:", "placeholder @DIR@", "only @PORT@"}},
		{"config leaves the tree", func(f map[string]string) {
			f[GateFile] = replace(gate, `"perf/service.toml"`, `"../base/perf/service.toml"`)
		}, []string{"perf/gate.toml:6:", "leaves the tree"}},
		// Refused at prepare and when run reads the kept contract, before
		// any service starts, not once the arms are rendered.
		{"unknown placeholder in the config", func(f map[string]string) {
			f["perf/service.toml"] = "[server]\nport = @PORT@\nregistry = \"@REGISTRY@/r.toml\"\n"
		},
			[]string{"perf/service.toml:3:", "unknown placeholder @REGISTRY@"}},
		{"empty compose entry", func(f map[string]string) {
			f[GateFile] = replace(gate, `compose = ["compose.yaml"]`, "compose = [\n  \"compose.yaml\",\n  \"\",\n]")
		},
			[]string{"perf/gate.toml:12:", "compose names an empty path"}},
		{"config missing", func(f map[string]string) { delete(f, "perf/service.toml") }, []string{"perf/gate.toml:6:", "no such file"}},
		{"no config env and no @CONFIG@", func(f map[string]string) { f[GateFile] = replace(gate, "config_env = \"SVC_CONFIG\"\n", "") }, []string{"config_env"}},
		{"fixed env placeholder", func(f map[string]string) { f[GateFile] = gate + "SVC__HOME = \"@HOME@\"\n" }, []string{"perf/gate.toml:15:", "@HOME@"}},
		{"neither arm.env nor legacy", func(f map[string]string) { delete(f, "perf/arm.env") }, []string{"carries neither perf/arm.env nor a legacy script"}},
		{"legacy script missing", func(f map[string]string) {
			delete(f, "perf/arm.env")
			f[GateFile] = gate + "\n[legacy]\nscript = \"scripts/perf/gate.sh\"\nfunction = \"gateway_env\"\n"
		}, []string{"perf/gate.toml:17:", "carries neither perf/arm.env nor scripts/perf/gate.sh"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{}
			for k, v := range good {
				files[k] = v
			}
			tt.edit(files)
			_, err := Load(writeTree(t, files))
			wantRefusal(t, err, tt.parts...)
		})
	}
	if _, err := Load(writeTree(t, good)); err != nil {
		t.Fatalf("the good tree is refused: %v", err)
	}
}

func TestRenderRefusesBadInput(t *testing.T) {
	tests := []struct {
		name, config, armEnv, extraGate string
		parts                           []string
	}{
		{"unknown placeholder in the config", "[server]\nport = @PORT@\nhome = \"@DIR@\"\nregistry = \"@REGISTRY@/r.toml\"\n", "SVC__A=1\n", "",
			[]string{"perf/service.toml:4:", "unknown placeholder @REGISTRY@", "only @PORT@"}},
		{"override line without the prefix", "[server]\nport = @PORT@\n", "SVC__A=1\n# fine\nRUST_LOG=debug\n", "",
			[]string{"perf/arm.env:3:", "sets no SVC__ variable"}},
		{"override line that is no assignment", "[server]\nport = @PORT@\n", "SVC__A=1\nSVC__B\n", "",
			[]string{"perf/arm.env:2:", "sets no SVC__ variable"}},
		{"unknown placeholder in an override", "[server]\nport = @PORT@\n", "SVC__A=@PORT@\nSVC__B=@TOKEN@\n", "",
			[]string{"perf/arm.env:2:", "@TOKEN@"}},
		{"override of a fixed variable", "[server]\nport = @PORT@\n", "SVC__A=1\nSVC__USAGE__ENABLED=true\n", "",
			[]string{"perf/arm.env:2", "SVC__USAGE__ENABLED", "perf/gate.toml:14"}},
		{"empty override file", "[server]\nport = @PORT@\n", "# nothing yet\n", "",
			[]string{"perf/arm.env", "sets no SVC__ variable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := serviceTree(t, "server.port", tt.config, tt.armEnv)
			tree := writeTree(t, files)
			// A bad arm.env is refused by Load (prepare, and run before
			// any service starts); the config's placeholders by Render.
			c, err := Load(tree)
			if atLoad := strings.HasPrefix(tt.parts[0], "perf/arm.env"); atLoad || err != nil {
				wantRefusal(t, err, tt.parts...)
				return
			}
			_, err = c.Render(context.Background(), RenderOptions{Port: 8070, Dir: filepath.Join(t.TempDir(), "arm")})
			wantRefusal(t, err, tt.parts...)
		})
	}
}

func TestRenderFillsPlaceholdersAndRewrites(t *testing.T) {
	files := serviceTree(t, "server.port", "[server]\nport = @PORT@\n[store]\nurl_file = \"@DIR@/store.url\"\n[pix]\nurl = \"http://127.0.0.1:8090\"\n",
		"SVC__LOG=@DIR@/log\nSVC__QUOTED='a b'\n")
	// A ready path names @PORT@ as a ready URL may: it is filled in too.
	files[GateFile] = replace(files[GateFile], `ready = "/health"`, `ready = "/health?port=@PORT@"`)
	c, err := Load(writeTree(t, files))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "perf-run", "base")
	a, err := c.Render(context.Background(), RenderOptions{Port: 8070, Dir: dir, Rewrite: func(b []byte) []byte {
		return []byte(replace(string(b), "127.0.0.1:8090", "127.0.0.2:8090"))
	}})
	if err != nil {
		t.Fatal(err)
	}
	got := readFile(t, a.ConfigPath)
	want := "[server]\nport = 8070\n[store]\nurl_file = \"" + dir + "/store.url\"\n[pix]\nurl = \"http://127.0.0.2:8090\"\n"
	if got != want {
		t.Errorf("rendered config\n%s\nwant\n%s", got, want)
	}
	wantEnv := []string{"SVC__USAGE__ENABLED=false", "SVC__LOG=" + dir + "/log", "SVC__QUOTED=a b", "SVC_CONFIG=" + a.ConfigPath}
	if !equal(a.Env, wantEnv) {
		t.Errorf("env %q, want %q", a.Env, wantEnv)
	}
	if a.Ready != "http://127.0.0.1:8070/health?port=8070" || a.Command[1] != "serve" || a.Check[1] != "check" || a.Command[0] != filepath.Join(c.Tree, "bin", "svc") {
		t.Errorf("arm %+v", a)
	}
	env := c.Environ([]string{"PATH=/bin", "SVC__LEAKED=1", "SVC_CONFIG=/elsewhere"}, a)
	if !equal(env, append([]string{"PATH=/bin"}, wantEnv...)) {
		t.Errorf("environ %q", env)
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		err  bool
	}{
		{"@BIN@ serve", []string{"@BIN@", "serve"}, false},
		{`@BIN@ --name 'a b' "c \"d\"" e\ f`, []string{"@BIN@", "--name", "a b", `c "d"`, "e f"}, false},
		{`x ''`, []string{"x", ""}, false},
		{"x | y", nil, true},
		{"x $HOME", nil, true},
		{`x "$HOME"`, nil, true},
		{"x \"`id`\"", nil, true},
		{`x "\$HOME" '$HOME'`, []string{"x", "$HOME", "$HOME"}, false},
		{"x 'open", nil, true},
		{`x \`, nil, true},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if (err != nil) != tt.err || !equal(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
