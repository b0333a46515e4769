package gate

import (
	"sort"

	"github.com/perfgate/perfgate/internal/armsfile"
	"github.com/perfgate/perfgate/internal/pairs"
	"github.com/perfgate/perfgate/internal/report"
)

// FromArmsFile is the gate's two arms as an arms file (docs/ab.md) gives
// them, base then head. It lives here, not in internal/armsfile, so that
// the file's parser (fuzzed on its own) needs none of the gate's packages.
func FromArmsFile(f *armsfile.File) []ArmSpec {
	return Pair(SpecOf(f.Base, pairs.RoleBase), SpecOf(f.Head, pairs.RoleHead))
}

// SpecOf is an arms file's arm as the gate runs it, tagged with its role
// (the table it came from).
func SpecOf(a armsfile.Arm, role pairs.Role) ArmSpec {
	s := ArmSpec{Role: role, Command: a.Command, Dir: a.Dir, Cwd: StartHere, Port: a.Port, URL: a.URL, Ready: a.Ready, CAFile: a.CAFile,
		Info: report.Build{Name: string(role), Commit: a.Commit}}
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the same environment order on every run
	for _, k := range keys {
		s.Env = append(s.Env, k+"="+a.Env[k])
	}
	return s
}
