package services

import (
	"reflect"
	"testing"
)

// Each arm's addresses: the head reaches every service of its tree on
// 127.0.0.1; the base its own copy of the group that differs (pix) on
// 127.0.0.2 and the shared nodes where the head's run them.
func TestAddressesPerArm(t *testing.T) {
	head := writeTree(t, pixFiles)
	base := writeTree(t, with(pixFiles, map[string]string{"pix/config.toml": "changed"}))
	p := mustDiff(t, head, base)
	headAt, baseAt := p.Addresses(false), p.Addresses(true)
	if got := headAt["pix"]; !reflect.DeepEqual(got, []string{"127.0.0.1:8090"}) {
		t.Errorf("the head reaches pix at %v, want 127.0.0.1:8090 (all: %v)", got, headAt)
	}
	if got := baseAt["pix"]; !reflect.DeepEqual(got, []string{"127.0.0.2:8090"}) {
		t.Errorf("the base reaches pix at %v, want its own copy on 127.0.0.2:8090 (all: %v)", got, baseAt)
	}
	if len(headAt["node-a"]) == 0 || !reflect.DeepEqual(headAt["node-a"], baseAt["node-a"]) {
		t.Errorf("node-a, shared, at %v for the head and %v for the base: want the same loopback address", headAt["node-a"], baseAt["node-a"])
	}
	if got, ok := baseAt["pixdb"]; !ok || len(got) != 0 {
		t.Errorf("pixdb publishes nothing, yet the base lists it as %v (present %v)", got, ok)
	}
}
