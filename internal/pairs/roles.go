package pairs

import "fmt"

// Role is what an arm is to the gate. The pairs drive the base against the
// head; a variant is the head's build started a second time with extra
// overrides, beside the head, for the variant control (internal/controls,
// docs/controls.md), and takes no part in the pairs.
type Role string

// The roles, the one vocabulary every stage uses for its arms: the arms'
// log files, work folders, store databases (perf_<role>) and report arms
// are named by them.
const (
	RoleBase    Role = "base"
	RoleHead    Role = "head"
	RoleVariant Role = "variant"
)

// Roles are the roles in the order the gate starts them.
var Roles = []Role{RoleBase, RoleHead, RoleVariant}

// Known reports whether r is one of the roles.
func (r Role) Known() bool {
	for _, k := range Roles {
		if r == k {
			return true
		}
	}
	return false
}

// Database is the role's own store database.
func (r Role) Database() string { return "perf_" + string(r) }

// ArmOf returns the arm of a role, and an error naming the role when there
// is not exactly one.
func ArmOf(arms []Arm, r Role) (Arm, error) {
	var found []Arm
	for _, a := range arms {
		if a.Role == r {
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		return Arm{}, fmt.Errorf("run: the arms hold %d of role %s, want one", len(found), r)
	}
	return found[0], nil
}
