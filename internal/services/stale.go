package services

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Stale is a run of a checkout whose owning process is gone: what a killed
// `perfgate run` left (its teardown never ran).
type Stale struct {
	RunID string
	Owner string
	// What lists its containers, networks and volumes ("kind id").
	What []string
}

// FindStale lists the runs labelled with checkout whose owner gone reports
// as ended. A run without an owner label (`perfgate services up`, meant to
// outlive its starter) is never stale; neither is one whose owner gone
// cannot vouch for (another machine's, another pid namespace's).
func FindStale(ctx context.Context, checkout string, gone func(owner string) bool) ([]Stale, error) {
	if checkout == "" {
		return nil, errors.New("finding stale runs: no checkout given")
	}
	filter := "label=" + CheckoutLabel + "=" + checkout
	format := `{{.Label "` + RunLabel + `"}}` + "\t" + `{{.Label "` + OwnerLabel + `"}}`
	runs := map[string]*Stale{}
	for _, kind := range [][]string{
		{"container", "ps", "-a", "--filter", filter, "--format", "{{.ID}}\t" + format},
		{"network", "network", "ls", "--filter", filter, "--format", "{{.ID}}\t" + format},
		{"volume", "volume", "ls", "--filter", filter, "--format", "{{.Name}}\t" + format},
	} {
		out, err := docker(ctx, kind[1:]...)
		if err != nil {
			return nil, fmt.Errorf("listing the %ss of earlier runs of %s: %w", kind[0], checkout, err)
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Split(line, "\t")
			if len(f) != 3 || f[1] == "" || f[2] == "" {
				continue
			}
			s := runs[f[1]]
			if s == nil {
				s = &Stale{RunID: f[1], Owner: f[2]}
				runs[f[1]] = s
			}
			s.What = append(s.What, kind[0]+" "+f[0])
		}
	}
	var out []Stale
	for _, s := range runs {
		if gone(s.Owner) {
			out = append(out, *s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RunID < out[j].RunID })
	return out, nil
}

// DownStale removes every stale run of checkout (see FindStale), networks
// and volumes included, and returns what it removed. Runs whose owner is
// alive, and other checkouts' runs, are not touched.
func DownStale(ctx context.Context, checkout string, gone func(owner string) bool) ([]Stale, error) {
	stale, err := FindStale(ctx, checkout, gone)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, s := range stale {
		if err := DownByLabel(ctx, s.RunID); err != nil {
			errs = append(errs, fmt.Errorf("removing stale run %s: %w", s.RunID, err))
		}
	}
	return stale, errors.Join(errs...)
}
