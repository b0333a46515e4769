package plan

import (
	"errors"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// positions maps a plan's key paths to their lines (internal/tomlpos reads
// them; the plan's refusals name them).
type positions struct {
	*tomlpos.Positions
}

// line returns the line of path, or of its nearest written ancestor, or 1.
func (p *positions) line(path []string) int {
	if p == nil {
		return 1
	}
	return p.Line(path...)
}

// scanPositions reads the plan's key lines before the TOML library parses
// it, refusing a plan that nests deeper than any plan needs: the library's
// time grows with the square of the nesting.
func scanPositions(path, src string) (*positions, error) {
	pos, err := tomlpos.Scan(src)
	var deep *tomlpos.TooDeep
	if errors.As(err, &deep) {
		return nil, exit.Refusef("%s:%d: %v, as docs/plan.md shows", path, deep.Line, err)
	}
	if err != nil {
		return nil, exit.Refusef("%s:1: reading the plan's key positions: %w", path, err)
	}
	return &positions{pos}, nil
}
