package experiment

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// rssName is the gauge a target process's resident memory is recorded
// under, beside the scraped ones, for a plateau's memory growth.
func rssName(pid int) string { return fmt.Sprintf("process_rss_bytes{pid=\"%d\"}", pid) }

// readRSS is a process's resident set, from /proc/PID/statm (its second
// field, in pages): what the plateau's "memory per minute" is read from
// when the target runs on this machine.
func readRSS(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/statm", pid))
	if err != nil {
		return 0, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	f := bytes.Fields(b)
	if len(f) < 2 {
		return 0, fmt.Errorf("reading the memory of process %d: /proc/%d/statm holds %q", pid, pid, b)
	}
	pages, err := strconv.ParseUint(string(f[1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("reading the memory of process %d: %w", pid, err)
	}
	return float64(pages) * float64(os.Getpagesize()), nil
}
