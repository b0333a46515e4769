package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
)

// The goal the issue sets.
const (
	goalDetect = 0.95
	goalFalse  = 0.01
	goalWall   = 6 * time.Minute
)

// stats is one profile's figures for one scenario.
type stats struct {
	runs, pass, regr, cannot int
	wouldFail                int // cannot judge, yet a metric breached: the signal was there
	walls                    []time.Duration
	ratios                   []float64
	closest                  float64 // the A/A run nearest to a false alarm: its worse - threshold
	closestID                string
	loadMin, loadMax         float64
	estWall, loadHigh        bool
}

func (s *stats) add(r record) {
	if s.runs == 0 {
		s.loadMin, s.loadMax, s.closest = math.Inf(1), math.Inf(-1), math.Inf(-1)
	}
	if r.Input != nil && r.ClosestMargin > s.closest {
		s.closest, s.closestID = r.ClosestMargin, r.Closest
	}
	s.runs++
	switch r.Code {
	case judge.Pass:
		s.pass++
	case judge.Regression:
		s.regr++
	default:
		s.cannot++
		if len(r.Failures) > 0 {
			s.wouldFail++
		}
	}
	s.walls = append(s.walls, time.Duration(r.WallS*float64(time.Second)))
	if !math.IsNaN(r.P50Ratio) && r.P50Ratio > 0 {
		s.ratios = append(s.ratios, r.P50Ratio)
	}
	s.loadMin, s.loadMax = math.Min(s.loadMin, r.LoadBefore), math.Max(s.loadMax, r.LoadBefore)
	s.estWall = s.estWall || r.EstWall
	s.loadHigh = s.loadHigh || r.LoadHigh
}

func (s *stats) maxWall() time.Duration {
	var m time.Duration
	for _, w := range s.walls {
		m = max(m, w)
	}
	return m
}

func labelOf(r record) string {
	if r.Label != "" {
		return r.Label
	}
	pr := r.Profile
	return fmt.Sprintf("%s (%d x (%s + %s) at %s/s, %s)", pr.Name, pr.Pairs, pr.Warmup, pr.Measure,
		strconv.FormatFloat(pr.Rate, 'f', -1, 64), tolString(pr.Tol))
}

// printSummary prints a table per profile (in the order first seen) and a
// conclusion line for each.
func printSummary(w io.Writer, recs []record) {
	var order []string
	by := map[string]map[string]*stats{}
	for _, r := range recs {
		l := labelOf(r)
		if by[l] == nil {
			by[l] = map[string]*stats{}
			order = append(order, l)
		}
		if by[l][r.Scenario] == nil {
			by[l][r.Scenario] = &stats{}
		}
		by[l][r.Scenario].add(r)
	}
	for _, l := range order {
		fmt.Fprintf(w, "profile %s\n", l)
		fmt.Fprintf(w, "| scenario | runs | pass | regression | cannot judge (would fail) | rate (one-sided 95 %% bound) | cannot-judge share | wall per gate, median / max | p50 head/base, median | load1 before |\n")
		fmt.Fprintf(w, "|---|---|---|---|---|---|---|---|---|---|\n")
		for _, name := range []string{"aa", "slow10", "slow25"} {
			s := by[l][name]
			if s == nil {
				continue
			}
			rate := ""
			if name == "aa" {
				rate = fmt.Sprintf("false alarms %s (<= %s)", pct(s.regr, s.runs), pctF(upperBound(s.regr, s.runs)))
			} else {
				rate = fmt.Sprintf("detected %s (>= %s)", pct(s.regr, s.runs), pctF(lowerBound(s.regr, s.runs)))
			}
			est := ""
			if s.estWall {
				est = "~"
			}
			load := fmt.Sprintf("%.2f-%.2f", s.loadMin, s.loadMax)
			if s.loadHigh {
				load += " (some over the limit)"
			}
			fmt.Fprintf(w, "| %s | %d | %d | %d | %d (%d) | %s | %s | %s%.0f s / %s%.0f s | %.3f | %s |\n",
				name, s.runs, s.pass, s.regr, s.cannot, s.wouldFail, rate, pct(s.cannot, s.runs),
				est, medianDur(s.walls).Seconds(), est, s.maxWall().Seconds(), medianF(s.ratios), load)
		}
		if aa := by[l]["aa"]; aa != nil && aa.closestID != "" {
			fmt.Fprintf(w, "A/A nearest to a false alarm: %s, %+.1f points from its threshold\n", aa.closestID, aa.closest*100)
		}
		fmt.Fprintf(w, "conclusion: %s\n\n", conclusion(by[l]))
	}
}

// conclusion says whether the profile reaches the goal by its point
// estimates, and whether the runs are enough to show it at 95 %.
func conclusion(m map[string]*stats) string {
	aa, s10 := m["aa"], m["slow10"]
	if aa == nil || s10 == nil {
		return "needs both aa and slow10 runs to judge the goal"
	}
	det, fa := float64(s10.regr)/float64(s10.runs), float64(aa.regr)/float64(aa.runs)
	lo, hi := lowerBound(s10.regr, s10.runs), upperBound(aa.regr, aa.runs)
	wall := max(aa.maxWall(), s10.maxWall())
	if s := m["slow25"]; s != nil {
		wall = max(wall, s.maxWall())
	}
	var miss []string
	if det < goalDetect {
		miss = append(miss, fmt.Sprintf("caught %s of 10 %% slowdowns, %.1f points under 95 %%", pct(s10.regr, s10.runs), (goalDetect-det)*100))
	}
	if fa > goalFalse {
		miss = append(miss, fmt.Sprintf("%s false alarms, over 1 %%", pct(aa.regr, aa.runs)))
	}
	if wall > goalWall {
		miss = append(miss, fmt.Sprintf("a gate took %.0f s, over 360 s", wall.Seconds()))
	}
	head := fmt.Sprintf("10 %% slowdown caught %d/%d (%s, >= %s at 95 %%), false alarms %d/%d (%s, <= %s at 95 %%), slowest gate %.0f s",
		s10.regr, s10.runs, pct(s10.regr, s10.runs), pctF(lo), aa.regr, aa.runs, pct(aa.regr, aa.runs), pctF(hi), wall.Seconds())
	if len(miss) > 0 {
		return head + ": goal NOT reached (" + strings.Join(miss, "; ") + ")"
	}
	if lo >= goalDetect && hi <= goalFalse {
		return head + ": goal reached and shown at 95 % confidence"
	}
	return head + fmt.Sprintf(": goal reached by the point estimates, not yet shown: at 95 %% confidence that needs >= %d slowed runs with no miss and >= %d A/A runs with no false alarm",
		runsToShow(1-goalDetect), runsToShow(goalFalse))
}

func pct(k, n int) string {
	if n == 0 {
		return "-"
	}
	return pctF(float64(k) / float64(n))
}

func pctF(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + " %" }

// summariseFile prints the recorded gates as recorded, then once for each
// re-judging variant asked for.
func summariseFile(path, tolVariants, pairVariants string) error {
	recs, err := readRecords(path)
	if err != nil {
		return err
	}
	fmt.Printf("bench/power: %d gates from %s\n\n", len(recs), path)
	// Judging again with the recorded tolerances gives the same verdicts
	// (the judge is a pure function) and fills figures older lines lack.
	for i, r := range recs {
		recs[i] = rejudge(r, nil, 0)
	}
	printSummary(os.Stdout, recs)
	if tolVariants == "" && pairVariants == "" {
		return nil
	}
	tols := []map[string]float64{nil}
	if tolVariants != "" {
		tols = nil
		for _, s := range strings.Split(tolVariants, ";") {
			t, err := parseTol(s)
			if err != nil {
				return err
			}
			tols = append(tols, t)
		}
	}
	ks := []int{0}
	if pairVariants != "" {
		ks = nil
		for _, s := range strings.Split(pairVariants, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || k < 1 {
				return fmt.Errorf("--pairs-variants %q: write pair counts like 4,6,8", s)
			}
			ks = append(ks, k)
		}
	}
	fmt.Println("re-judged offline (the same measured phases; walls marked ~ are scaled by the pairs kept):")
	fmt.Println()
	var out []record
	for _, t := range tols {
		for _, k := range ks {
			for _, r := range recs {
				if k > 0 && r.Input != nil && k > len(r.Input.Base) {
					continue
				}
				j := rejudge(r, t, k)
				j.Label = labelOf(j) + " re-judged, from " + r.Profile.Name
				out = append(out, j)
			}
		}
	}
	printSummary(os.Stdout, out)
	return nil
}
