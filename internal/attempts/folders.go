package attempts

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/perfgate/perfgate/internal/exit"
	"github.com/perfgate/perfgate/internal/report"
)

// FolderPrefix names each attempt's uploaded report folder:
// perf-report-attempt-<n>, n the attempt job's own number.
const FolderPrefix = "perf-report-attempt-"

// StallProneEnv is the workflow's list of CPU models on which a regression
// is retried, comma-separated.
const StallProneEnv = "STALL_PRONE"

var folderRe = regexp.MustCompile(`^` + FolderPrefix + `([1-9][0-9]*)$`)

// jobResults are the values GitHub gives needs.<job>.result.
var jobResults = map[string]bool{"success": true, "failure": true, "cancelled": true, "skipped": true}

// ParseJobResults reads --job-results: needs.attempt-<n>.result of each
// attempt job in order, comma-separated.
func ParseJobResults(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for i, r := range strings.Split(s, ",") {
		r = strings.TrimSpace(r)
		if !jobResults[r] {
			return nil, exit.Refusef("verdict: --job-results item %d is %q: give needs.attempt-<n>.result, one of success, failure, cancelled, skipped", i+1, r)
		}
		out = append(out, r)
	}
	return out, nil
}

// Files are the names an attempt's run writes in its folder (the gate
// owns them).
type Files struct {
	Report, Summary string
}

// Collect reads every attempt's folder under dir and decides the verdict.
func Collect(dir string, jobResults []string, policy Policy, files Files) (*Verdict, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !(len(jobResults) > 0 && os.IsNotExist(err)) {
		return nil, exit.Refuse(fmt.Errorf("verdict: reading the attempts' reports: %w", err))
	}
	rows := map[int]*Row{}
	row := func(n int) *Row {
		if rows[n] == nil {
			rows[n] = &Row{Outcome: Outcome{Number: n}}
		}
		return rows[n]
	}
	for _, e := range entries {
		m := folderRe.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		r := row(n)
		r.Folder = filepath.Join(dir, e.Name())
		if err := r.read(files); err != nil {
			return nil, err
		}
	}
	for i, res := range jobResults {
		if res == "skipped" && rows[i+1] == nil {
			continue // the attempt never ran
		}
		row(i + 1).JobResult = res
	}
	if len(rows) == 0 {
		return nil, exit.Refusef("verdict: %s holds no %s<n> folder and no attempt ran: download the attempts' report artifacts there (see docs/action.md)", dir, FolderPrefix)
	}
	v := &Verdict{}
	for _, r := range rows {
		if r.Decision.Next == "" {
			r.Decision = policy.Decide(r.Outcome)
		}
		v.Attempts = append(v.Attempts, *r)
	}
	sort.Slice(v.Attempts, func(i, j int) bool { return v.Attempts[i].Outcome.Number < v.Attempts[j].Outcome.Number })
	outcomes := make([]Outcome, len(v.Attempts))
	for i, r := range v.Attempts {
		outcomes[i] = r.Outcome
	}
	v.Final, v.HasFinal = FinalOf(outcomes)
	v.Code = exit.CannotJudge
	if v.HasFinal {
		v.Code = Code(v.Final)
	}
	return v, nil
}

// read fills the row from its folder: the record `attempts next` kept,
// else the report's own verdict, else an attempt that ended without one.
func (r *Row) read(files Files) error {
	found := map[string]string{}
	err := filepath.WalkDir(r.Folder, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || (name != RecordFile && name != files.Report && name != files.Summary) {
			return nil
		}
		if old, ok := found[name]; !ok || len(p) < len(old) {
			found[name] = p
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("verdict: reading %s: %w", r.Folder, err)
	}
	r.Report, r.Summary = found[files.Report], found[files.Summary]
	n := r.Outcome.Number
	if p, ok := found[RecordFile]; ok {
		rec, err := ReadRecord(p)
		if err != nil {
			return err
		}
		if rec.Attempt != n {
			return exit.Refusef("%s: the record says attempt %d but its folder is attempt %d: upload each attempt's report as %s<its own number>", p, rec.Attempt, n, FolderPrefix)
		}
		r.Outcome = rec.Outcome()
		r.Decision = Decision{Next: rec.Next, Reason: rec.Reason}
		return nil
	}
	if r.Report != "" {
		rep, err := report.Read(r.Report)
		if err != nil {
			return err
		}
		r.Outcome = Outcome{Number: n, HasExitCode: true, ExitCode: int(rep.Verdict.Code), CPUModel: rep.CPUModel}
	}
	return nil
}

// Markdown is the verdict job's summary (report.FinalMarkdown), with the
// final attempt's own summary under the table.
func (v *Verdict) Markdown() (string, error) {
	f := report.Final{Code: v.Code, Word: Word(v.Code)}
	if v.HasFinal {
		f.Attempt = v.Final.Number
	}
	for _, r := range v.Attempts {
		f.Rows = append(f.Rows, report.FinalRow{Attempt: r.Outcome.Number, CPUModel: r.Outcome.CPUModel, Verdict: r.Word(), Next: string(r.Decision.Next), Reason: r.Decision.Reason})
		if !v.HasFinal || r.Outcome.Number != v.Final.Number || r.Summary == "" {
			continue
		}
		md, err := os.ReadFile(r.Summary)
		if err != nil {
			return "", fmt.Errorf("reading attempt %d's summary: %w", r.Outcome.Number, err)
		}
		f.Summary = md
	}
	return report.FinalMarkdown(f), nil
}

// WriteMarkdown writes the verdict job's summary (Markdown) to path, making
// its folder.
func (v *Verdict) WriteMarkdown(path string) error {
	md, err := v.Markdown()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the verdict's summary: %w", err)
	}
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return fmt.Errorf("writing the verdict's summary: %w", err)
	}
	return nil
}
