package armsfile

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

const goodArms = `store = true

[base]
command = ["bin/svc", "--addr", "127.0.0.1:@PORT@", "--store-file", "@DIR@/store.dsn"]
port    = 8070
dir     = "target/perf-run/base"
ready   = "/healthz"
env     = { SVC_B = "2", SVC_A = "@PORT@" }
commit  = "3f2a1c9"

[head]
command = ["bin/svc"]
env     = { SVC_ADDR = "127.0.0.1:@PORT@" }
url     = "http://127.0.0.1:@PORT@"
ready   = "tcp://127.0.0.1:@PORT@"
`

func TestArmsFileAccepted(t *testing.T) {
	f, err := Parse("arms.toml", []byte(goodArms))
	if err != nil {
		t.Fatal(err)
	}
	if !f.Store || f.Base.Port != 8070 || f.Head.Port != 0 || f.Base.Commit != "3f2a1c9" || f.Head.Ready != "tcp://127.0.0.1:@PORT@" {
		t.Errorf("parsed %+v", f)
	}
	if got, want := f.Base.Env, map[string]string{"SVC_A": "@PORT@", "SVC_B": "2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("env %v, want %v", got, want)
	}
}

// TestArmsFileRefusals: every mistake is refused when the file is read,
// before any arm starts, naming its line.
func TestArmsFileRefusals(t *testing.T) {
	head := "[head]\ncommand = [\"svc\", \"@PORT@\"]\n"
	base := func(lines string) string { return "[base]\ncommand = [\"svc\", \"@PORT@\"]\n" + lines + head }
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("pem"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, file, want string }{
		{"syntax", "[base\n", "arms.toml:2: this is not valid TOML (expected '.' or ']' to end table name, but got '\\n' instead)"},
		{"unknown top key", "stor = true\n" + base(""), `arms.toml:1: unknown key "stor" in the arms file; did you mean "store"?`},
		{"unknown arm key", base("\nreddy = \"/\"\n"), `arms.toml:4: unknown key "reddy" in [base]; did you mean "ready"?`},
		{"unknown arm key, no near miss", base("\nlisten = \"/\"\n"), `arms.toml:4: unknown key "listen" in [base]; the keys are command, env, dir, port, url, ready, ca_file, commit`},
		{"no head", "[base]\ncommand = [\"svc\", \"@PORT@\"]\n", "arms.toml:1: the arms file has no [head] table; add [head] with command = [\"./bin/service\", \"--port\", \"@PORT@\"]"},
		{"store type", "store = \"yes\"\n" + base(""), "arms.toml:1: store must be true or false, not a string; write store = true"},
		{"port type", base("port = \"8080\"\n"), "arms.toml:3: port must be a whole number, not a string; write port = 8080"},
		{"port range", base("port = 65536\n"), "arms.toml:3: port 65536 is not a TCP port (1-65535); write port = 8080, or leave port out for a free one"},
		{"port zero", base("port = 0\n"), "arms.toml:3: port 0 is not a TCP port (1-65535); write port = 8080, or leave port out for a free one"},
		{"same port", "[base]\ncommand = [\"svc\"]\nport = 8080\n[head]\ncommand = [\"svc\"]\nport = 8080\n", "arms.toml:6: both arms have port 8080, and two services cannot listen on one port; give each arm its own port, or leave port out for a free one"},
		{"same url", "[base]\ncommand = [\"svc\"]\nport = 8080\n[head]\ncommand = [\"svc\"]\nport = 8081\nurl = \"http://127.0.0.1:8080\"\n", "arms.toml:7: url \"http://127.0.0.1:8080\" names port 8080 but the arm's port is 8081; write @PORT@ in url"},
		{"same dir", "[base]\ncommand = [\"svc\", \"@PORT@\"]\ndir = \"run/arm\"\n[head]\ncommand = [\"svc\", \"@PORT@\"]\ndir = \"run/./arm/\"\n", "arms.toml:6: both arms have dir \"run/./arm/\", where each arm's store.dsn and files would overwrite the other's; give each arm its own folder"},
		{"fixed url without port", base("url = \"http://127.0.0.1:9000\"\n"), "arms.toml:3: url \"http://127.0.0.1:9000\" names port 9000 but the arm's port is left to perfgate; write port = 9000, or @PORT@ in url"},
		{"command a string", "[base]\ncommand = \"svc @PORT@\"\n" + head, "arms.toml:2: command must be an array of words, not a string; write command = [\"./bin/service\", \"--addr\", \"127.0.0.1:@PORT@\"]"},
		{"command word type", "[base]\ncommand = [\"svc\", 8080]\n" + head, "arms.toml:2: command's word 2 must be a string, not a whole number; write command = [\"./bin/service\", \"--addr\", \"127.0.0.1:@PORT@\"]"},
		{"no command", "[base]\nport = 1\n" + head, "arms.toml:1: this arm has no command; write command = [\"./bin/service\", \"--addr\", \"127.0.0.1:@PORT@\"] under its [base]"},
		{"command placeholder", "[base]\ncommand = [\"svc\", \"@PROT@\"]\n" + head, "arms.toml:2: command uses the placeholder @PROT@; only @PORT@ and @DIR@ are filled in"},
		{"port nowhere", "[base]\ncommand = [\"svc\"]\n" + head, "arms.toml:1: [base] names @PORT@ nowhere and sets no port, so the arm cannot know the free port perfgate picks for it; put @PORT@ in its command or env, or write port = 8080"},
		{"env type", base("env = { A = 1 }\n"), "arms.toml:3: env A must be a string, not a whole number; write A = \"value\""},
		{"env placeholder", base("env = { A = \"@DRI@\" }\n"), "arms.toml:3: env A uses the placeholder @DRI@; only @PORT@ and @DIR@ are filled in"},
		{"remote url", base("url = \"http://10.0.0.1:@PORT@\"\n"), "arms.toml:3: url \"http://10.0.0.1:@PORT@\" names 10.0.0.1, which is not loopback: perfgate only reaches arms on 127.0.0.1 (or ::1)"},
		{"url with userinfo", base("url = \"http://u:pw@127.0.0.1:@PORT@\"\n"), "arms.toml:3: url \"http://***@127.0.0.1:@PORT@\" holds a user name or password, which perfgate would print; put a credential in a secret plan variable instead"},
		{"url scheme", base("url = \"ftp://127.0.0.1:@PORT@\"\n"), "arms.toml:3: url \"ftp://127.0.0.1:@PORT@\" has scheme \"ftp\"; write http:// or https://"},
		{"remote ready", base("ready = \"http://example.com/healthz\"\n"), "arms.toml:3: ready \"http://example.com/healthz\" names example.com, which is not loopback: perfgate only reaches arms on 127.0.0.1 (or ::1) (or write a path such as \"/healthz\")"},
		{"ready placeholder", base("ready = \"/h/@DIR@\"\n"), "arms.toml:3: ready uses the placeholder @DIR@; only @PORT@ is filled in"},
		{"missing ca_file", base("ca_file = \"nope.pem\"\n"), "arms.toml:3: ca_file \"nope.pem\" is not a readable file; write the path of the CA certificate (PEM) that signs the arm's certificate"},
		{"too deep", "[base]\ncommand = [\"svc\", \"@PORT@\"]\nenv = " + strings.Repeat("{a = ", 40) + "\n" + head, "arms.toml:3: keys and values nest more than 16 levels deep here, more than any perfgate file needs; write the tables out flat"},
		{"base not a table", "base = 1\n" + head, "arms.toml:1: base must be a table, not a whole number; write [base] with command = [...]"},
	} {
		_, err := Parse("arms.toml", []byte(tc.file))
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if exit.Code(err) != exit.CannotJudge {
			t.Errorf("%s: exit %d", tc.name, exit.Code(err))
		}
		sep := "; "
		if strings.HasSuffix(tc.want, "?") {
			sep = " "
		}
		if want := tc.want + sep + "docs/ab.md shows an arms file"; err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, want)
		}
	}
	if _, err := Parse("arms.toml", []byte(base("ca_file = \""+ca+"\"\nurl = \"https://127.0.0.1:@PORT@\"\n"))); err != nil {
		t.Errorf("an https arm with its CA: %v", err)
	}
}

var armsRefusalShape = regexp.MustCompile(`^arms\.toml:[1-9][0-9]*: [^\n]+$`)

// FuzzArmsFile: any arms file is accepted with both commands, or refused
// with exit 2 in one line naming the file and a line.
func FuzzArmsFile(f *testing.F) {
	f.Add([]byte(goodArms))
	f.Add([]byte("[base]\ncommand = [\"svc\"]\nport = 8080\n[head]\ncommand = [\"svc\"]\nport = 8080\n"))
	f.Add([]byte("store = 1\n[base]\ncommand = \"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Parse("arms.toml", data)
		if err != nil {
			if exit.Code(err) != exit.CannotJudge || !armsRefusalShape.MatchString(err.Error()) {
				t.Fatalf("refusal with exit %d not one FILE:LINE: line: %q", exit.Code(err), err)
			}
			return
		}
		if len(a.Base.Command) == 0 || len(a.Head.Command) == 0 || a.Base.Command[0] == "" {
			t.Fatalf("accepted without commands: %+v", a)
		}
	})
}
