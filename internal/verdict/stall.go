package verdict

import (
	"context"
	"fmt"
	"sort"

	"github.com/perfgate/perfgate/internal/attempts"
)

// Learn says when history marks a CPU model stall-prone: when its share of
// exit-2 attempts over its last Window attempts exceeds Share, once it has
// at least MinAttempts of them (one cannot-judge out of one is no
// pattern).
type Learn struct {
	Window      int
	Share       float64
	MinAttempts int
}

// The defaults of Learn.
const (
	DefaultLearnWindow = 50
	DefaultLearnShare  = 0.3
	DefaultLearnMin    = 10
)

func (l Learn) withDefaults() Learn {
	if l.Window <= 0 {
		l.Window = DefaultLearnWindow
	}
	if l.Share <= 0 {
		l.Share = DefaultLearnShare
	}
	if l.MinAttempts <= 0 {
		l.MinAttempts = DefaultLearnMin
	}
	return l
}

// Models are every CPU model with recent attempts or a configured mark,
// with its share of exit 2s and why it is, or is not, stall-prone.
func (s *service) Models(ctx context.Context) ([]ModelStat, error) {
	stats, err := s.st.Models(ctx, s.cfg.Learn.Window)
	if err != nil {
		return nil, err
	}
	configured := attempts.Policy{StallProne: s.cfg.StallProne}
	seen := map[string]bool{}
	for i := range stats {
		m := &stats[i]
		seen[m.CPUModel] = true
		if m.Attempts > 0 {
			m.Share = float64(m.Exit2) / float64(m.Attempts)
		}
		s.cfg.Learn.judge(m, configured.StallProneModel(m.CPUModel))
	}
	for _, c := range s.cfg.StallProne {
		known := false
		for name := range seen {
			if attempts.SameCPUModel(name, c) {
				known = true
			}
		}
		if !known {
			seen[c] = true
			m := ModelStat{CPUModel: c}
			s.cfg.Learn.judge(&m, true)
			stats = append(stats, m)
		}
	}
	sort.Slice(stats, func(i, j int) bool { return stats[i].CPUModel < stats[j].CPUModel })
	return stats, nil
}

// judge sets m's mark and the words the page shows for it.
func (l Learn) judge(m *ModelStat, configured bool) {
	learned := m.Attempts >= l.MinAttempts && m.Share > l.Share
	window := fmt.Sprintf("%d of its last %d attempts (%.0f %%) could not be judged", m.Exit2, m.Attempts, 100*m.Share)
	switch {
	case configured && learned:
		m.StallProne, m.Why = true, "configured as stall-prone; history agrees: "+window
	case configured:
		m.StallProne, m.Why = true, "configured as stall-prone (--stall-prone)"
	case learned:
		m.StallProne, m.Why = true, fmt.Sprintf("learned: %s, over the %.0f %% share that marks a model", window, 100*l.Share)
	case m.Attempts < l.MinAttempts:
		m.Why = fmt.Sprintf("%s; fewer than the %d attempts a mark needs", window, l.MinAttempts)
	default:
		m.Why = fmt.Sprintf("%s, not over the %.0f %% share that marks a model", window, 100*l.Share)
	}
}

// policy is the retry policy for an attempt on model: the configured
// stall-prone models, plus model itself when its history marks it (only its
// own history matters to this attempt's decision).
func (s *service) policy(ctx context.Context, model string) (attempts.Policy, error) {
	p := attempts.Policy{StallProne: append([]string(nil), s.cfg.StallProne...), MaxRetries: s.cfg.MaxRetries}
	if model == "" || p.StallProneModel(model) {
		return p, nil
	}
	m, err := s.st.ModelWindow(ctx, model, s.cfg.Learn.Window)
	if err != nil {
		return p, err
	}
	if m.Attempts > 0 {
		m.Share = float64(m.Exit2) / float64(m.Attempts)
	}
	s.cfg.Learn.judge(&m, false)
	if m.StallProne {
		p.StallProne = append(p.StallProne, model)
	}
	return p, nil
}
