package load

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteSummary writes the text summary of a result.
func WriteSummary(w io.Writer, meta ReportMeta, r *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "perfgate load: %s, %s measured after %s warm-up", meta.Target, fmtDur(r.Measured), fmtDur(meta.Warmup))
	if r.Canceled {
		b.WriteString(" (canceled: partial result)")
	}
	b.WriteString("\n")
	s := r.Schedule
	fmt.Fprintf(&b, "schedule: offered %.1f/s, achieved %.1f/s; %d arrivals, %d sent, %d late (>= %s), %d dropped",
		s.Offered, s.Achieved, s.Intended, s.Sent, s.Late, fmtDur(LateAfter), s.Dropped)
	if s.Canceled > 0 {
		fmt.Fprintf(&b, ", %d abandoned in flight", s.Canceled)
	}
	fmt.Fprintf(&b, "; send lateness p50 %s p99 %s max %s\n",
		fmtDur(NearestRank(s.Lateness, 50)), fmtDur(NearestRank(s.Lateness, 99)), fmtDur(NearestRank(s.Lateness, 100)))
	if s.OutOfSockets > 0 {
		fmt.Fprintf(&b, "WARNING: %d arrivals were not sent: the generator ran out of sockets (its open-file limit, ulimit -n, or its local ports)\n", s.OutOfSockets)
	}
	if late := s.Dropped - s.OutOfSockets; late > 0 {
		fmt.Fprintf(&b, "WARNING: %d arrivals could not be sent on time and were dropped: the generator did not hold the offered rate\n", late)
	}
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "group\trequests\tsuccess\tp50\tp90\tp95\tp99\tmax\tserver p50\tserver p99\t")
	rows := append(append([]*GroupStats{}, r.Groups...), r.Total())
	rows[len(rows)-1].Name = "total"
	for _, g := range rows {
		srv50, srv99 := "-", "-"
		if g.Server != nil && g.Server.TotalCount() > 0 {
			srv50, srv99 = fmtDur(NearestRank(g.Server, 50)), fmtDur(NearestRank(g.Server, 99))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f%%\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", g.Name, g.Requests, 100*g.SuccessRatio(),
			fmtDur(g.Percentile(50)), fmtDur(g.Percentile(90)), fmtDur(g.Percentile(95)), fmtDur(g.Percentile(99)),
			fmtDur(g.Percentile(100)), srv50, srv99)
	}
	tw.Flush()
	for _, g := range r.Groups {
		if g.Failures() == 0 {
			continue
		}
		var parts []string
		for st, n := range g.Statuses {
			parts = append(parts, fmt.Sprintf("%d x status %d", n, st))
		}
		for k, n := range g.Errors {
			parts = append(parts, fmt.Sprintf("%d x %s", n, k))
		}
		sort.Strings(parts)
		if g.WrongAnswers == 0 {
			fmt.Fprintf(&b, "%s: %d failed (%d unexpected status, %d errors); answers: %s\n", g.Name, g.Failures(), g.Unexpected,
				g.Failures()-g.Unexpected, strings.Join(parts, ", "))
			continue
		}
		fmt.Fprintf(&b, "%s: %d failed (%d unexpected status, %d wrong answers, %d errors); answers: %s\n", g.Name, g.Failures(), g.Unexpected,
			g.WrongAnswers, g.Failures()-g.Unexpected-g.WrongAnswers, strings.Join(parts, ", "))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// FormatProgress is the live progress line for a snapshot (no newline).
func FormatProgress(s Snapshot) string {
	phase := "measured"
	if s.Warmup {
		phase = "warm-up "
	}
	return fmt.Sprintf("%7.1fs %s %8.1f req/s  p50 %8s  p99 %8s  failures %d  dropped %d",
		s.Elapsed.Seconds(), phase, s.Rate, fmtDur(s.P50), fmtDur(s.P99), s.Failures, s.Dropped)
}

func fmtDur(d time.Duration) string {
	ms := float64(d) / 1e6
	switch {
	case d == 0:
		return "0"
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case ms >= 100:
		return fmt.Sprintf("%.0fms", ms)
	case ms >= 10:
		return fmt.Sprintf("%.1fms", ms)
	default:
		return fmt.Sprintf("%.2fms", ms)
	}
}
