package gate

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/perfgate/perfgate/internal/base"
	"github.com/perfgate/perfgate/internal/contract"
	"github.com/perfgate/perfgate/internal/pairs"
)

// variantGate is a gate file whose variant control writes its overrides as
// perf/arm.env writes its lines: quoted, single-quoted and bare. Its check
// is `true`, so the base's config check passes without a built service.
const variantGate = `build = "true"
binary = "bin/svc"
start = "@BIN@ serve @CONFIG@"
check = "true"
config = "perf/service.toml"
prefix = "SVC__"
ready = "/health"

[[control]]
kind = "variant"
overrides = ['SVC__A="quoted value"', "SVC__B='single quoted'", "SVC__C=bare", 'SVC__E="@PORT@"']
counter = "exchanges"
`

// The variant's overrides are "NAME=VALUE lines as perf/arm.env holds
// them" (docs/contract.md): an arm.env line loses one pair of matching
// quotes around its value, and so must a variant's override on its way to
// the variant arm's environment, or SVC__A="quoted value" would hand the
// service the quotes as part of the value.
func TestVariantOverridesLoseTheirQuotesLikeArmEnvLines(t *testing.T) {
	tree := t.TempDir()
	for name, text := range map[string]string{
		contract.GateFile:   variantGate,
		"perf/service.toml": "port = @PORT@\n",
		"perf/arm.env":      "SVC__A=\"the head's value\"\nSVC__D='from arm.env'\n",
	} {
		p := filepath.Join(tree, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := contract.Load(tree)
	if err != nil {
		t.Fatal(err)
	}
	a := &preparedArms{choice: &base.Choice{Commit: "4f1c2a9e8d7b6a5f"}, baseC: c, headC: c, ctls: c.Controls}
	pr := Prepared{Repo: tree, Out: t.TempDir(), Getenv: func(name string) string {
		if name == "GITHUB_SHA" {
			return "9e8d7b6a5f4f1c2a"
		}
		return ""
	}}
	o, err := pr.options(context.Background(), a, nil)
	if err != nil {
		t.Fatal(err)
	}
	head, variant := specOf(o.Arms, pairs.RoleHead), specOf(o.Arms, pairs.RoleVariant)
	if head == nil || variant == nil {
		t.Fatalf("arms %+v, want a head and a variant", o.Arms)
	}
	if want := []string{"SVC__A=the head's value", "SVC__D=from arm.env"}; !slices.Equal(head.Env, want) {
		t.Errorf("the head's env %q, want %q", head.Env, want)
	}
	want := []string{"SVC__A=quoted value", "SVC__D=from arm.env", "SVC__B=single quoted", "SVC__C=bare", "SVC__E=" + strconv.Itoa(variant.Port)}
	if !slices.Equal(variant.Env, want) {
		t.Errorf("the variant's env %q, want %q", variant.Env, want)
	}
}
