package services

import (
	"bytes"
	"strings"
	"testing"
)

// A plan's reason is printed in job logs. A password or a token that
// differs between the trees, written in the compose file or interpolated
// from .env or --env, must show as the key that differs, never as its
// value.
func TestPlanReasonNeverPrintsSecrets(t *testing.T) {
	const compose = `
services:
  cache:
    image: redis:7
    command: redis-server --requirepass ${REDIS_PASSWORD}
  web:
    image: ferroweb:1
    build:
      context: ./web
      args:
        NPM_TOKEN: ${NPM_TOKEN}
  db:
    image: postgres:16
    healthcheck:
      test: ["CMD-SHELL", "PGPASSWORD=${DB_PASSWORD} psql -U app -c 'select 1'"]
`
	files := map[string]string{
		"compose.yaml":   compose,
		"web/Dockerfile": "FROM scratch\n",
		".env":           "REDIS_PASSWORD=same-redis-pw\nDB_PASSWORD=same-db-pw\n",
	}
	cases := []struct {
		name             string
		headEnv, baseEnv map[string]string // .env files
		headArg, baseArg string            // --env NPM_TOKEN=
		want             string
		secrets          []string
	}{
		{"a password in command, from .env", map[string]string{".env": "REDIS_PASSWORD=hd-redis-Zq81\nDB_PASSWORD=same-db-pw\n"},
			map[string]string{".env": "REDIS_PASSWORD=bs-redis-Kp27\nDB_PASSWORD=same-db-pw\n"}, "npm-same", "npm-same",
			"cache: command[2] differs", []string{"hd-redis-Zq81", "bs-redis-Kp27"}},
		{"a token in build.args, from --env", nil, nil, "npm_hd_Tk55", "npm_bs_Tk66",
			"web: build.args.NPM_TOKEN differs", []string{"npm_hd_Tk55", "npm_bs_Tk66"}},
		{"a password in healthcheck.test, from .env", map[string]string{".env": "REDIS_PASSWORD=same-redis-pw\nDB_PASSWORD=hd-db-Wx31\n"},
			map[string]string{".env": "REDIS_PASSWORD=same-redis-pw\nDB_PASSWORD=bs-db-Wx32\n"}, "npm-same", "npm-same",
			"db: healthcheck.test[1] differs", []string{"hd-db-Wx31", "bs-db-Wx32"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			head := writeTree(t, with(files, c.headEnv), "NPM_TOKEN="+c.headArg)
			base := writeTree(t, with(files, c.baseEnv), "NPM_TOKEN="+c.baseArg)
			p := mustDiff(t, head, base)
			var table bytes.Buffer
			p.WriteTable(&table)
			var whys []string
			for _, g := range p.Groups {
				if g.Copied {
					whys = append(whys, g.Why)
				}
			}
			if len(whys) != 1 || whys[0] != c.want {
				t.Errorf("reasons of the copied groups = %q, want [%q]", whys, c.want)
			}
			for _, s := range c.secrets {
				if strings.Contains(table.String(), s) {
					t.Errorf("the plan prints the secret %q:\n%s", s, table.String())
				}
			}
		})
	}
}

// Cut at its end alone, a long image reference that differs only in its
// tag printed the same text for head and base; the reason must show where
// the two differ.
func TestPlanReasonShowsWhereLongValuesDiffer(t *testing.T) {
	const long = "registry.example.com/ferrofed/platform/ferropix-patient-index"
	const compose = `
services:
  pix:
    image: IMAGE
    volumes:
      - MOUNT:/data:ro
`
	tree := func(image, mount string) map[string]string {
		return map[string]string{"compose.yaml": strings.NewReplacer("IMAGE", image, "MOUNT", mount).Replace(compose)}
	}
	mount := "/srv/ferrofed/performance/fixtures/patient-index/%s/snapshots/2024/january/first-week/monday"
	cases := []struct {
		name       string
		head, base map[string]string
		want       string
	}{
		{"a long image reference differing in its tag",
			tree(long+":0.0.25", "/srv"), tree(long+":0.0.24", "/srv"),
			`pix: image differs (head "….example.com/ferrofed/platform/ferropix-patient-index:0.0.25", base "….example.com/ferrofed/platform/ferropix-patient-index:0.0.24")`},
		{"a long host path differing in its middle",
			tree("ferropix:1", strings.Replace(mount, "%s", "head-fixtures", 1)), tree("ferropix:1", strings.Replace(mount, "%s", "base-fixtures", 1)),
			`pix: volumes[0].source differs (head "…tures/patient-index/head-fixtures/snapshots/2024/january/fir…", base "…tures/patient-index/base-fixtures/snapshots/2024/january/fir…")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := mustDiff(t, writeTree(t, c.head), writeTree(t, c.base))
			if len(p.Groups) != 1 || p.Groups[0].Why != c.want {
				t.Fatalf("groups %+v, want one whose reason is %q", p.Groups, c.want)
			}
		})
	}
}

func TestShownCutsBothValuesAroundTheirFirstDifference(t *testing.T) {
	long := strings.Repeat("a", 70)
	cases := []struct {
		name       string
		head, base any
		wantH      string
		wantB      string
	}{
		{"short values whole", "postgres:16", "postgres:15", `"postgres:16"`, `"postgres:15"`},
		{"one side unset", nil, "postgres:15", "unset", `"postgres:15"`},
		{"unset beside a long value shows its start", long + "b", nil, `"` + strings.Repeat("a", 60) + `…"`, "unset"},
		{"a long value differing at its start keeps its start", "x" + long, "y" + long,
			`"x` + strings.Repeat("a", 59) + `…"`, `"y` + strings.Repeat("a", 59) + `…"`},
		{"a long value differing at its end keeps its end", long + "1", long + "2",
			`"…` + strings.Repeat("a", 59) + `1"`, `"…` + strings.Repeat("a", 59) + `2"`},
		{"a long value differing in its middle is cut at both ends", strings.Repeat("a", 40) + "X" + strings.Repeat("b", 60), strings.Repeat("a", 40) + "Y" + strings.Repeat("b", 60),
			`"…` + strings.Repeat("a", 20) + "X" + strings.Repeat("b", 39) + `…"`, `"…` + strings.Repeat("a", 20) + "Y" + strings.Repeat("b", 39) + `…"`},
		{"a long base against a short head", "a", long,
			`"a"`, `"` + strings.Repeat("a", 60) + `…"`},
		{"an escape is never cut in half", strings.Repeat(`"`, 70) + "1", strings.Repeat(`"`, 70) + "2",
			`"…` + strings.Repeat(`\"`, 59) + `1"`, `"…` + strings.Repeat(`\"`, 59) + `2"`},
		{"lists as JSON", []any{"a", "b"}, []any{"a", "c"}, `["a","b"]`, `["a","c"]`},
		{"& and < shown as they are", "a&b<c", "a&b<d", `"a&b<c"`, `"a&b<d"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, b := shown(c.head, c.base)
			if h != c.wantH || b != c.wantB {
				t.Errorf("shown = %s, %s\nwant    %s, %s", h, b, c.wantH, c.wantB)
			}
		})
	}
}

func TestValuesShownOnlyForSafeKeys(t *testing.T) {
	cases := []struct {
		path string
		want bool
	}{
		{"image", true},
		{"ports[0].published", true},
		{"volumes[3].source", true},
		{"healthcheck.interval", true},
		{"build.dockerfile", true},
		{"deploy.resources.limits.memory", true},
		{"command[2]", false},
		{"entrypoint", false},
		{"environment.PIX_AUTH", false},
		{"build.args.NPM_TOKEN", false},
		{"healthcheck.test[1]", false},
		{"healthcheck", false},
		{"labels.token", false},
		{"logging.options.splunk-token", false},
		{"networks.backend.driver_opts.secret", false},
		{"ports[0].x-token", false},
		{"x-secret", false},
		{"post_start[0].command", false},
	}
	for _, c := range cases {
		if got := valuesShown(c.path); got != c.want {
			t.Errorf("valuesShown(%q) = %v, want %v", c.path, got, c.want)
		}
	}
}
