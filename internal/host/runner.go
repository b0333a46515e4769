package host

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
)

// AttemptEnv is the variable the workflow sets in each attempt job: the
// attempt's own number (1, 2, 3), which GITHUB_RUN_ATTEMPT is not (that
// counts re-runs of the whole workflow).
const AttemptEnv = "PERFGATE_ATTEMPT"

// Runner is what a report says about where its attempt ran.
type Runner struct {
	// Attempt is the attempt job's own number, from PERFGATE_ATTEMPT; 0
	// outside the workflow.
	Attempt int
	// RunAttempt is GITHUB_RUN_ATTEMPT: 1, or more after a re-run.
	RunAttempt int
	// CPUModel is the "model name" of /proc/cpuinfo; empty when unknown.
	CPUModel string
}

// Facts reads the runner's facts. Numbers that are absent or not a
// positive whole number read as 0 (unknown): a report is still written.
func Facts(getenv func(string) string) Runner {
	return Runner{
		Attempt:    positive(getenv(AttemptEnv)),
		RunAttempt: positive(getenv("GITHUB_RUN_ATTEMPT")),
		CPUModel:   CPUModel(),
	}
}

func positive(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// CPUModel is the runner's CPU model: the first "model name" line of
// /proc/cpuinfo, or "" when it has none (some ARM kernels).
func CPUModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return ParseCPUModel(f)
}

// ParseCPUModel reads the first "model name" of a /proc/cpuinfo text, its
// value trimmed of spaces at both ends.
func ParseCPUModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
