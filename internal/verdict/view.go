package verdict

import (
	"context"
	"sort"
)

// TrendRuns is how many of a repository's newest final runs the page
// draws.
const TrendRuns = 30

// RepoView is one repository's page: its latest runs, each metric's
// head/base ratio over the final attempts of its newest runs, and the CPU
// models' recent attempts.
type RepoView struct {
	Repository string
	Latest     []Run
	Trends     []Trend
	Models     []ModelStat
	// Learn is the rule that marks models, for the page to say why.
	Learn Learn
}

// Trend is one metric's ratios, oldest run first.
type Trend struct {
	Metric string
	Points []TrendPoint
}

func (s *service) Repository(ctx context.Context, repo string) (RepoView, error) {
	v := RepoView{Repository: repo, Learn: s.cfg.Learn}
	var err error
	if v.Latest, err = s.st.Latest(ctx, repo, 20); err != nil {
		return v, err
	}
	if len(v.Latest) == 0 {
		return v, ErrNotFound
	}
	pts, err := s.st.Trends(ctx, repo, TrendRuns)
	if err != nil {
		return v, err
	}
	by := map[string]int{}
	for _, p := range pts {
		// Two plans may both measure p99.search: each plan's is its own
		// trend, named after the plan.
		name := p.Metric
		if p.Plan != "" {
			name = p.Plan + ": " + p.Metric
		}
		i, ok := by[name]
		if !ok {
			i = len(v.Trends)
			by[name] = i
			v.Trends = append(v.Trends, Trend{Metric: name})
		}
		v.Trends[i].Points = append(v.Trends[i].Points, p)
	}
	sort.Slice(v.Trends, func(i, j int) bool { return v.Trends[i].Metric < v.Trends[j].Metric })
	if v.Models, err = s.Models(ctx); err != nil {
		return v, err
	}
	return v, nil
}
