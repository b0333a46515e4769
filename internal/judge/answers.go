package judge

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// splitUnexpected moves a report's old Unexpected counts, where statuses
// ("500") and failure kinds ("timeout") shared one map, into WrongStatus
// and Failed, so the rest of the judge reads one shape. It copies what it
// changes: the caller's input is left as it was.
func splitUnexpected(in Input) Input {
	fix := func(phases []Phase) []Phase {
		out := make([]Phase, len(phases))
		for i, p := range phases {
			out[i] = p
			out[i].Groups = make([]GroupFigures, len(p.Groups))
			for j, g := range p.Groups {
				out[i].Groups[j] = g
				if len(g.Unexpected) == 0 {
					continue
				}
				ng := &out[i].Groups[j]
				ng.WrongStatus, ng.Failed = map[int]uint64{}, map[string]uint64{}
				for k, c := range g.WrongStatus {
					ng.WrongStatus[k] += c
				}
				for k, c := range g.Failed {
					ng.Failed[k] += c
				}
				for k, c := range g.Unexpected {
					if code, err := strconv.Atoi(k); err == nil {
						ng.WrongStatus[code] += c
					} else {
						ng.Failed[k] += c
					}
				}
				ng.Unexpected = nil
			}
		}
		return out
	}
	in.Base, in.Head = fix(in.Base), fix(in.Head)
	return in
}

// unexpected sums, per group over the phases, the answers the plan did not
// name and the requests that got none, one line per group: "group search:
// 3 answers the plan does not name (500 x2), 1 request unanswered
// (timeout x1)".
func unexpected(phases []Phase) []string {
	status := map[string]map[int]uint64{}
	failed := map[string]map[string]uint64{}
	seen := map[string]bool{}
	var order []string
	note := func(name string) {
		if !seen[name] {
			seen[name] = true
			order = append(order, name)
		}
	}
	for _, p := range phases {
		for _, g := range p.Groups {
			for code, c := range g.WrongStatus {
				if c == 0 {
					continue
				}
				note(g.Name)
				if status[g.Name] == nil {
					status[g.Name] = map[int]uint64{}
				}
				status[g.Name][code] += c
			}
			for kind, c := range g.Failed {
				if c == 0 {
					continue
				}
				note(g.Name)
				if failed[g.Name] == nil {
					failed[g.Name] = map[string]uint64{}
				}
				failed[g.Name][kind] += c
			}
		}
	}
	sort.Strings(order)
	var lines []string
	for _, name := range order {
		var parts []string
		if n, list := countList(status[name]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d answers the plan does not name (%s)", n, list))
		}
		if n, list := countList(failed[name]); n > 0 {
			parts = append(parts, fmt.Sprintf("%d requests with no answer (%s)", n, list))
		}
		lines = append(lines, fmt.Sprintf("group %s: %s", name, strings.Join(parts, ", ")))
	}
	return lines
}

// countList totals the counts of m and lists them in key order: "500 x3,
// 503 x1" for statuses, "reset x1, timeout x2" for failure kinds.
func countList[K cmp.Ordered](m map[K]uint64) (uint64, string) {
	keys := make([]K, 0, len(m))
	var total uint64
	for k, n := range m {
		keys = append(keys, k)
		total += n
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%v x%d", k, m[k])
	}
	return total, strings.Join(parts, ", ")
}

// answeredWrong says whether the head answered some group with an HTTP
// status the plan does not name while the base answered that group only as
// the plan says. That is the head's own answer: a stalled or late runner
// slows answers, it does not turn a 200 into a 500. Failures (errors,
// timeouts) are not answers, and a runner can cause them; where the base
// also answered wrong (a route the change adds, the test data), the status
// may not be the head's doing either.
func answeredWrong(in Input) bool {
	base := wrongStatusGroups(in.Base)
	for g := range wrongStatusGroups(in.Head) {
		if !base[g] {
			return true
		}
	}
	return false
}

// wrongStatusGroups names the groups answered with a status the plan does
// not name.
func wrongStatusGroups(phases []Phase) map[string]bool {
	out := map[string]bool{}
	for _, p := range phases {
		for _, g := range p.Groups {
			for _, c := range g.WrongStatus {
				if c > 0 {
					out[g.Name] = true
				}
			}
		}
	}
	return out
}

// leftOut names each request group that had no answer as the plan says
// in some phase of either arm, so its latency was not compared, with why:
// which arm, in how many phases, and what came instead. compared counts
// the groups that were.
func leftOut(in Input) (lines []string, compared int) {
	var names []string
	seen := map[string]bool{}
	for _, phases := range [][]Phase{in.Base, in.Head} {
		for _, p := range phases {
			for _, g := range p.Groups {
				if !seen[g.Name] {
					seen[g.Name] = true
					names = append(names, g.Name)
				}
			}
		}
	}
	for _, name := range names {
		var why []string
		for _, arm := range []struct {
			name   string
			phases []Phase
		}{{"base", in.Base}, {"head", in.Head}} {
			if w := noAnswers(arm.phases, name); w != "" {
				why = append(why, arm.name+" "+w)
			}
		}
		if len(why) == 0 {
			compared++
			continue
		}
		lines = append(lines, fmt.Sprintf("group %s not compared: %s", name, strings.Join(why, "; ")))
	}
	return lines, compared
}

// noAnswers says how many of an arm's phases had no answer as the plan
// says for group, and what came instead ("" when every phase had some).
func noAnswers(phases []Phase, group string) string {
	empty := 0
	var wrong uint64
	status := map[int]uint64{}
	failed := map[string]uint64{}
	for _, p := range phases {
		for _, g := range p.Groups {
			if g.Name != group || g.Halves[0].Count+g.Halves[1].Count > 0 {
				continue
			}
			empty++
			for k, c := range g.WrongStatus {
				status[k] += c
			}
			for k, c := range g.Failed {
				failed[k] += c
			}
			wrong += g.WrongAnswers
		}
	}
	if empty == 0 {
		return ""
	}
	var got []string
	if n, list := countList(status); n > 0 {
		got = append(got, "answered "+list)
	}
	if n, list := countList(failed); n > 0 {
		got = append(got, "failed "+list)
	}
	if wrong > 0 {
		got = append(got, fmt.Sprintf("%d wrong answers", wrong))
	}
	if len(got) == 0 {
		got = append(got, "sent it nothing")
	}
	return fmt.Sprintf("had no answer as the plan says in %d of %d phases (%s)", empty, len(phases), strings.Join(got, ", "))
}
