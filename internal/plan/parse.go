package plan

import (
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/tomlpos"
)

// Limits that keep arithmetic on arrivals far from overflow and catch a
// typo's extra zeros; no loopback run needs more.
const (
	maxRate     = 1e6
	maxDuration = 24 * time.Hour
	// minMeasured is the shortest measured window: under a second no
	// percentile or rate means anything ("1ns" offered a billion arrivals
	// a second).
	minMeasured = time.Second
)

type parser struct {
	problems
	tomlpos.Reader // the strict getters; each problem they find goes to problems
	file           string
	dir            string
	pos            *positions
	p              *Plan
	bodies         bodyFiles
}

// newParser reads file's text (its key positions, then its tables) and
// returns the parser that checks them, reporting to its problems.
func newParser(file string, data []byte) (*parser, map[string]any, error) {
	raw, pos, err := tomlpos.Read(string(data))
	if err != nil {
		return nil, nil, readRefusal(file, err)
	}
	ps := &parser{file: file, dir: filepath.Dir(file), pos: &positions{pos}, p: Default()}
	ps.problems.plan = file
	ps.Reader = tomlpos.Reader{Pos: pos, Report: func(line int, msg string) { ps.list = append(ps.list, problem{file: file, line: line, msg: msg}) }}
	return ps, raw, nil
}

func parse(path string, data []byte) (*Plan, error) {
	ps, raw, err := newParser(path, data)
	if err != nil {
		return nil, err
	}
	p := ps.p
	p.Path, p.dir, p.pos = path, ps.dir, ps.pos

	ps.Known(raw, nil, "the plan's top level", "server_timing", "vars", "data", "load", "ab", "judge", "tolerance", "threshold", "group", "experiment", "counter", "store_writes", "control")
	if v, ok := ps.Str(raw, nil, "server_timing", `server_timing = "Server-Timing"`); ok {
		if !isToken(v) {
			ps.At(nil, "server_timing", "server_timing %q is not a header name; write server_timing = \"Server-Timing\"", v)
		}
		p.ServerTiming = v
	}
	ps.vars(raw)
	ps.data(raw)
	ps.groups(raw)
	ps.load(raw)
	ps.weights()
	ps.ab(raw)
	ps.judge(raw)
	ps.tolerance(raw)
	ps.thresholds(raw)
	ps.experiment(raw) // experiment.go
	ps.counters(raw)   // counter.go
	ps.controls(raw)   // control.go
	ps.placeholders()
	if len(ps.list) == 0 {
		// [load]'s defaults are only checked when the plan writes [load]:
		// a plan made for the gate alone meets CheckLoad in perfgate load.
		if _, written := raw["load"]; written {
			ps.list = append(ps.list, p.check(p.Load, "[load]", ps.Line([]string{"load", "rate"}))...)
		}
		// Likewise [ab]: a plan made for perfgate load alone meets
		// CheckAB when the gate runs it (internal/gate).
		if _, written := raw["ab"]; written {
			ps.list = append(ps.list, p.checkAB(p.AB)...)
		}
	}
	if err := ps.first(); err != nil {
		return nil, err
	}
	return p, nil
}

// readRefusal is a plan that is not TOML, or nests deeper than any plan
// needs (the TOML library's time grows with the square of the nesting).
func readRefusal(path string, err error) error {
	var deep *tomlpos.TooDeep
	if errors.As(err, &deep) {
		return exit.Refusef("%s:%d: %v, as docs/plan.md shows", path, deep.Line, err)
	}
	var se *tomlpos.SyntaxError
	if errors.As(err, &se) {
		return exit.Refusef("%s:%d: this is not valid TOML (%s); fix the syntax on this line, docs/plan.md shows a complete plan", path, se.Line, se.Msg)
	}
	return exit.Refusef("%s:1: reading the plan: %w", path, err)
}

// dur reads a duration of at most maxDuration (tomlpos.Reader.Dur).
func (ps *parser) dur(m map[string]any, path []string, key, example string, positive bool) (time.Duration, bool) {
	return ps.Dur(m, path, key, example, positive, maxDuration)
}

// measured reads a measured window's length: a duration of at least
// minMeasured.
func (ps *parser) measured(m map[string]any, path []string, key, example string) (time.Duration, bool) {
	d, ok := ps.dur(m, path, key, example, true)
	if ok && d < minMeasured {
		ps.At(path, key, "%s %s is too short to measure anything (under %s); write %s", key, d, minMeasured, example)
		return 0, false
	}
	return d, ok
}

func fnum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0 {
			continue
		}
		return false
	}
	return true
}
