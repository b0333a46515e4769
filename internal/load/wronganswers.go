package load

import "sort"

// WrongAnswerTally sums wrong answers by group over a report's phases or
// stages and keeps each group's first sample, for the lines every report
// prints (WrongAnswerLine). The zero value is ready to use.
type WrongAnswerTally struct {
	count map[string]uint64
	first map[string]*AnswerSample
}

// Add counts n wrong answers of group; sample, which may be nil, is kept
// if the group has none yet.
func (t *WrongAnswerTally) Add(group string, n uint64, sample *AnswerSample) {
	if n == 0 {
		return
	}
	if t.count == nil {
		t.count, t.first = map[string]uint64{}, map[string]*AnswerSample{}
	}
	t.count[group] += n
	if t.first[group] == nil && sample != nil {
		t.first[group] = sample
	}
}

// Lines is one WrongAnswerLine per group that answered wrong, in name
// order; none when no group did.
func (t *WrongAnswerTally) Lines() []string {
	names := make([]string, 0, len(t.count))
	for n := range t.count {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, 0, len(names))
	for _, n := range names {
		lines = append(lines, WrongAnswerLine(n, t.count[n], t.first[n]))
	}
	return lines
}
