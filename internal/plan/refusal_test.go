package plan

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// planDir writes the files every plan in these tests may name and moves
// into the folder, so messages read "plan.toml:N: ..." as a user sees them.
func planDir(t testing.TB, ids int) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= ids; i++ {
		fmt.Fprintf(&b, "id-%d\n", i)
	}
	writeFile(t, filepath.Join(dir, "ids.txt"), b.String())
	writeFile(t, filepath.Join(dir, "body.json"), "{\n  \"name\": \"{nmae}\"\n}\n")
	writeFile(t, filepath.Join(dir, "dup.txt"), "a\nb\n\nc\na\n")
	writeFile(t, filepath.Join(dir, "space.txt"), "a\nb c\n")
	writeFile(t, filepath.Join(dir, "three.txt"), "x\ny\nz\n")
	t.Chdir(dir)
	return dir
}

func writeFile(t testing.TB, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

const hello = "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 200\n"

// Every refusal, one line each in testdata/refusals.golden.
var refusals = []struct{ name, plan string }{
	{"syntax", "[load\nrate = 20\n"},
	{"no groups", "[load]\nrate = 20\n"},
	{"unknown top-level key", "servr_timing = \"Server-Timing\"\n" + hello},
	{"unknown key in load", "[load]\nrate = 20\ndurtion = \"60s\"\n" + hello},
	{"unknown key in group", hello + "expected = 200\n"},
	{"unknown key in second group", hello + "[[group]]\nname = \"b\"\npath = \"/b\"\nexpect = 200\nwieght = 2\n"},
	{"unknown key in data", "[data.ids]\nfile = \"ids.txt\"\nwarmup = 0.2\n" + hello},
	{"unknown key in ab", "[ab]\npair = 4\n" + hello},
	{"rate as string", "[load]\nrate = \"20\"\n" + hello},
	{"negative load rate", "[load]\nrate = -5\n" + hello},
	{"negative ab rate", "[ab]\nrate = -20\n" + hello},
	{"zero ab rate", "[ab]\nrate = 0\n" + hello},
	{"rate beyond limit", "[load]\nrate = 1e9\n" + hello},
	{"rate zero without stages", "[load]\nrate = 0\n" + hello},
	{"rate zero with warm-up", "[load]\nrate = 0\nwarmup = \"5s\"\n[[load.stage]]\ntarget = 10\nduration = \"10s\"\n" + hello},
	{"duration as integer", "[load]\nduration = 60\n" + hello},
	{"duration without unit", "[load]\nduration = \"60\"\n" + hello},
	{"negative warm-up", "[ab]\nwarmup = \"-10s\"\n" + hello},
	{"zero measure", "[ab]\nmeasure = \"0s\"\n" + hello},
	{"stages and duration", "[load]\nduration = \"60s\"\n[[load.stage]]\ntarget = 10\nduration = \"10s\"\n" + hello},
	{"stage without target", "[load]\nrate = 5\n[[load.stage]]\ntarget = 10\nduration = \"10s\"\n[[load.stage]]\nduration = \"10s\"\n" + hello},
	{"unknown order", "[load]\norder = \"weighted\"\n" + hello},
	{"pairs as float", "[ab]\npairs = 4.5\n" + hello},
	{"pairs out of range", "[ab]\npairs = 0\n" + hello},
	{"pairs a word not auto", "[ab]\npairs = \"adaptive\"\n" + hello},
	{"min_pairs without auto", "[ab]\npairs = 8\nmin_pairs = 4\n" + hello},
	{"max_pairs under min_pairs", "[ab]\npairs = \"auto\"\nmin_pairs = 8\nmax_pairs = 6\n" + hello},
	{"min_pairs over the default max", "[ab]\npairs = \"auto\"\nmin_pairs = 20\n" + hello},
	{"min_pairs of 1", "[ab]\npairs = \"auto\"\nmin_pairs = 1\n" + hello},
	{"negative idle cpu", "[ab]\nidle_cpu = -2\n" + hello},
	// A limit of 0 would fail on any use, and the judge reads an unset
	// (zero) limit as the default, so 0 is refused rather than read as 2 %.
	{"zero idle cpu", "[ab]\nidle_cpu = 0\n" + hello},
	{"zero idle transactions", "[ab]\nidle_tx_per_sec = 0\n" + hello},
	{"group without name", "[[group]]\npath = \"/hello\"\nexpect = 200\n"},
	{"group name with a dot", "[[group]]\nname = \"get.item\"\npath = \"/hello\"\nexpect = 200\n"},
	{"duplicate group names", hello + "\n" + hello},
	{"group without path", "[[group]]\nname = \"hello\"\nexpect = 200\n"},
	{"path is a URL", "[[group]]\nname = \"hello\"\npath = \"http://127.0.0.1:8080/hello?x=1\"\nexpect = 200\n"},
	{"path without slash", "[[group]]\nname = \"hello\"\npath = \"hello\"\nexpect = 200\n"},
	{"path with a space", "[[group]]\nname = \"hello\"\npath = \"/a b\"\nexpect = 200\n"},
	{"lower-case method", "[[group]]\nname = \"hello\"\nmethod = \"get\"\npath = \"/hello\"\nexpect = 200\n"},
	{"missing expect", "[[group]]\nname = \"hello\"\npath = \"/hello\"\n"},
	{"expect out of range", "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = 2000\n"},
	{"expect as string", "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = \"200\"\n"},
	{"expect empty", "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = []\n"},
	{"expect list with a bad code", "[[group]]\nname = \"hello\"\npath = \"/hello\"\nexpect = [200, 42]\n"},
	{"body and body_file", hello + "body = \"x\"\nbody_file = \"body.json\"\n"},
	{"body_file missing", hello + "body_file = \"nope.json\"\n"},
	{"header value not a string", hello + "headers = { X-Count = 3 }\n"},
	{"header name invalid", hello + "headers = { \"X Count\" = \"3\" }\n"},
	{"headers not a table", hello + "headers = \"Accept: */*\"\n"},
	{"unknown placeholder in path", "[data.id]\nfile = \"ids.txt\"\n[[group]]\nname = \"item\"\npath = \"/items/{idd}\"\nexpect = 200\n"},
	{"unknown placeholder in header", "[vars]\napi_token = { secret = true }\n" + hello + "headers = { Authorization = \"Bearer {api_tokn}\" }\n"},
	{"unknown placeholder in body", hello + "body = '{\"n\": \"{name}\"}'\n"},
	{"unknown placeholder in body file", hello + "body_file = \"body.json\"\n"},
	{"secret value written in plan", "[vars]\napi_token = \"s3cr3t-in-the-plan\"\n" + hello},
	{"secret false on a token name", "[vars]\nncp_token = { secret = false }\n" + hello},
	{"variable of wrong type", "[vars]\nretries = 3\n" + hello},
	{"variable name not an identifier", "[vars]\n\"my-var\" = \"x\"\n" + hello},
	{"unknown key in variable", "[vars]\nregion = { value = \"eu\", secrte = true }\n" + hello},
	{"data without file", "[data.ids]\ndraw = \"fresh\"\n" + hello},
	{"data file missing", "[data.ids]\nfile = \"missing.txt\"\n" + hello},
	{"data file is a device", "[data.ids]\nfile = \"/dev/zero\"\n" + hello},
	{"data file is a folder", "[data.ids]\nfile = \".\"\n" + hello},
	{"data value repeats", "[data.ids]\nfile = \"dup.txt\"\n" + hello},
	{"data value with a space", "[data.ids]\nfile = \"space.txt\"\n" + hello},
	{"unknown draw", "[data.ids]\nfile = \"ids.txt\"\ndraw = \"zipfian\"\n" + hello},
	{"zipf without exponent", "[data.ids]\nfile = \"ids.txt\"\ndraw = \"zipf\"\n" + hello},
	{"zipf negative exponent", "[data.ids]\nfile = \"ids.txt\"\ndraw = \"zipf\"\nexponent = -1\n" + hello},
	{"exponent on a fresh draw", "[data.ids]\nfile = \"ids.txt\"\nexponent = 1.1\n" + hello},
	{"exhausted on a zipf draw", "[data.ids]\nfile = \"ids.txt\"\ndraw = \"zipf\"\nexponent = 1\nexhausted = \"reshuffle\"\n" + hello},
	{"warmup fraction of one", "[data.ids]\nfile = \"ids.txt\"\nwarmup_fraction = 1\n" + hello},
	{"data named like a variable", "[vars]\nids = \"x\"\n[data.ids]\nfile = \"ids.txt\"\n" + hello},
	{"data name not an identifier", "[data.item-ids]\nfile = \"ids.txt\"\n" + hello},
	{"too few values for a warm-up", "[data.ids]\nfile = \"three.txt\"\nwarmup_fraction = 0.1\n" + hello},
	{"fresh values run out in ab", "[ab]\npairs = 4\n[data.ids]\nfile = \"ids.txt\"\n[[group]]\nname = \"item\"\npath = \"/items/{ids}\"\nexpect = 200\n"},
	{"fresh values run out in load", "[load]\nrate = 200\n[ab]\nrate = 1\npairs = 1\nwarmup = \"0s\"\nmeasure = \"10s\"\n[data.ids]\nfile = \"ids.txt\"\n[[group]]\nname = \"item\"\npath = \"/items/{ids}\"\nexpect = 200\n"},
	{"max_rate reached (FerroFED's gate's rule)", "[ab]\nrate = 40\n" + sevenGroups},
	{"weight with groups in turn", hello + "weight = 3\n"},
	{"zero weight", "[load]\norder = \"weight\"\n" + hello + "weight = 0\n"},
	{"unknown tolerance", "[tolerance]\nlatncy = 25\n" + hello},
	{"negative tolerance", "[tolerance]\nlatency = -25\n" + hello},
	{"tolerance of an unknown group", "[tolerance]\n\"p99.helo\" = 30\n" + hello},
	{"tolerance as string", "[tolerance]\nlatency = \"25%\"\n" + hello},
	{"threshold unknown metric", hello + "[[threshold]]\nmetric = \"p90ms\"\nbelow = \"150ms\"\n"},
	{"threshold percentile without below", hello + "[[threshold]]\nmetric = \"p90\"\n"},
	{"threshold success without min", hello + "[[threshold]]\nmetric = \"success\"\n"},
	{"threshold min above 100", hello + "[[threshold]]\nmetric = \"success\"\nmin = 101\n"},
	{"threshold of an unknown group", hello + "[[threshold]]\ngroup = \"helo\"\nmetric = \"p99\"\nbelow = \"1s\"\n"},
	{"threshold server side without header", hello + "[[threshold]]\nmetric = \"p90\"\nbelow = \"150ms\"\nside = \"server\"\n"},
	{"threshold below as number", hello + "[[threshold]]\nmetric = \"p90\"\nbelow = 150\n"},
	{"server_timing not a header name", "server_timing = \"Server Timing\"\n" + hello},
	{"first problem in the file wins", "[load]\nrate = -1\n[[group]]\nname = \"hello\"\npath = \"/hello\"\n"},
	{"problem in an inline array of stages", "[load]\nstage = [{ target = 10, duration = \"10s\" },\n  { target = -1, duration = \"10s\" }]\n" + hello},
	{"multi-line string does not shift lines", "[[group]]\nname = \"a\"\npath = \"/a\"\nexpect = 200\nbody = \"\"\"\nfoo = 1\n\"\"\"\nfoo = 2\n"},
	{"key after a multi-line array", hello + "[load]\nstage = [\n  { target = 1, duration = \"1s\" },\n]\nrat = 3\n"},
	{"quoted key with a dot", hello + "[tolerance]\nlatency = 10\n\"p99.hello\" = \"x\"\n"},
}

const sevenGroups = `[[group]]
name = "metadata"
path = "/metadata"
expect = 200
[[group]]
name = "patient"
path = "/patient"
expect = 200
[[group]]
name = "population"
path = "/population"
expect = 200
[[group]]
name = "stored"
path = "/stored"
expect = 200
[[group]]
name = "template"
path = "/template"
expect = 200
[[group]]
name = "contact-point-summary"
path = "/fhir/Patient/$summary?identifier=urn:oid:2.999.1.1%7Cffd-test-0001"
expect = 200
[[group]]
name = "contact-point-emergency"
path = "/fhir/Patient/$summary?identifier=urn:oid:2.999.1.1%7Cffd-test-0001"
expect = 200
max_rate = 5
`

var messageShape = regexp.MustCompile(`^[^:\s]+:(\d+): [^;]+; .+`)

func TestRefusals(t *testing.T) {
	planDir(t, 100)
	var got strings.Builder
	for _, tc := range refusals {
		p, err := Parse("plan.toml", []byte(tc.plan))
		if err == nil {
			t.Errorf("%s: plan accepted (%d groups), want a refusal", tc.name, len(p.Groups))
			continue
		}
		msg := err.Error()
		if exit.Code(err) != exit.CannotJudge {
			t.Errorf("%s: exit code %d, want 2", tc.name, exit.Code(err))
		}
		m := messageShape.FindStringSubmatch(msg)
		if m == nil || strings.Contains(msg, "\n") {
			t.Errorf("%s: %q is not one line of FILE:LINE: what is wrong; what to write", tc.name, msg)
			continue
		}
		if line, _ := strconv.Atoi(m[1]); line < 1 || line > strings.Count(tc.plan, "\n")+1 && strings.HasPrefix(msg, "plan.toml:") {
			t.Errorf("%s: line %d is outside the plan", tc.name, line)
		}
		fmt.Fprintf(&got, "%s\n\t%s\n", tc.name, msg)
	}
	golden(t, "refusals.golden", got.String())
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(testdataDir(t), name)
	if *update {
		writeFile(t, path, got)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading the golden file (run go test -update to write it): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from what the code says; run go test ./internal/plan -update and review the diff.\ngot:\n%s", name, got)
	}
}

var pkgDir, _ = os.Getwd()

func testdataDir(t *testing.T) string {
	t.Helper()
	return filepath.Join(pkgDir, "testdata")
}

// TestSharedPlans checks the plans other packages' tests use: example.toml
// parses, and every invalid-*.toml is refused with its golden message.
func TestSharedPlans(t *testing.T) {
	dir := filepath.Join(pkgDir, "..", "..", "testdata", "plans")
	files, err := filepath.Glob(filepath.Join(dir, "*.toml"))
	if err != nil || len(files) < 2 {
		t.Fatalf("testdata/plans holds %d plans (%v)", len(files), err)
	}
	var got strings.Builder
	for _, f := range files {
		name := filepath.Base(f)
		_, err := ParseFile(f)
		invalid := strings.HasPrefix(name, "invalid-")
		switch {
		case invalid && err == nil:
			t.Errorf("%s was accepted", name)
		case invalid && exit.Code(err) != exit.CannotJudge:
			t.Errorf("%s: exit %d, want 2", name, exit.Code(err))
		case !invalid && err != nil:
			t.Errorf("%s: %v", name, err)
		case invalid:
			fmt.Fprintf(&got, "%s\n", strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""))
		}
	}
	golden(t, "shared-plans.golden", got.String())
}

func TestParseFileRefusals(t *testing.T) {
	dir := planDir(t, 0)
	for _, tc := range []struct{ path, want string }{
		{"nope.toml", "nope.toml:1: cannot read the plan (open nope.toml: no such file or directory); write the path of a plan file, such as --plan perf/plan.toml"},
		{dir, dir + ":1: cannot read the plan (" + dir + " is not a regular file); write the path of a plan file, such as --plan perf/plan.toml"},
	} {
		_, err := ParseFile(tc.path)
		if err == nil || err.Error() != tc.want || exit.Code(err) != exit.CannotJudge {
			t.Errorf("ParseFile(%s):\n got %v\nwant %s", tc.path, err, tc.want)
		}
	}
}
