package plan

import (
	"fmt"
	"sort"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// problem is one thing wrong with a plan; parsing collects them all and
// reports the first in the plan file, so the user fixes the file top down.
type problem struct {
	file string
	line int
	msg  string
}

type problems struct {
	plan string
	list []problem
}

func (ps *problems) add(file string, line int, format string, a ...any) {
	ps.list = append(ps.list, problem{file: file, line: line, msg: fmt.Sprintf(format, a...)})
}

// first returns the problem earliest in the plan file, else the first found
// in another file (a data or body file), as one exit-2 refusal.
func (ps *problems) first() error {
	if len(ps.list) == 0 {
		return nil
	}
	list := append([]problem(nil), ps.list...)
	sort.SliceStable(list, func(i, j int) bool {
		pi, pj := list[i].file == ps.plan, list[j].file == ps.plan
		if pi != pj {
			return pi
		}
		if pi {
			return list[i].line < list[j].line
		}
		return false
	})
	p := list[0]
	return exit.Refusef("%s:%d: %s", p.file, p.line, tomlpos.OneLine(p.msg))
}
