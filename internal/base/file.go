package base

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/perfgate/perfgate/internal/event"
	"github.com/perfgate/perfgate/internal/exit"
)

// DefaultFile is where prepare and `perfgate base` write the choice.
const DefaultFile = "target/perf-base/base.md"

// The line prefixes of base.md; ReadFile reads back exactly these.
const (
	commitPrefix  = "- commit: `"
	eventPrefix   = "- event: "
	tagPrefix     = "- previous release: "
	reasonPrefix  = "The base is "
	notePrefix    = "Performance: "
	baseMDHeading = "# Performance base"
)

var hexCommit = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// WriteFile writes base.md: a heading, the reason sentence, the facts a
// machine reads back, and the release-notes line. The file is replaced
// whole (written beside and renamed), so a reader never sees half of it.
func WriteFile(path string, c *Choice) error {
	if c == nil || !hexCommit.MatchString(c.Commit) {
		return fmt.Errorf("writing %s: the choice names no base commit", path)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n\n%s\n\n", baseMDHeading, c.Reason)
	fmt.Fprintf(&b, "%s%s`\n", commitPrefix, c.Commit)
	if c.Event != "" {
		fmt.Fprintf(&b, "%s%s\n", eventPrefix, c.Event)
	}
	if c.PreviousTag != "" {
		fmt.Fprintf(&b, "%s%s\n", tagPrefix, c.PreviousTag)
	}
	fmt.Fprintf(&b, "\nRelease notes line:\n\n%s\n", c.Note)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".base.md-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// ReadFile reads base.md back. A missing file, or one that names no base
// commit or no release-notes line, is refused (exit 2): the gate named no
// base, and nothing may claim one.
func ReadFile(path string) (*Choice, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, exit.Refusef("%s does not exist, so the gate named no base: run `perfgate base` (or `perfgate prepare`) first", path)
	}
	if err != nil {
		return nil, exit.Refusef("reading %s: %w", path, err)
	}
	c := &Choice{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimRight(sc.Text(), " \r")
		switch {
		case strings.HasPrefix(line, commitPrefix):
			v := strings.TrimSuffix(strings.TrimPrefix(line, commitPrefix), "`")
			if !hexCommit.MatchString(v) {
				return nil, exit.Refusef("%s:%d: %q is not a full commit hash: write the base's 40-hex hash as %s<hash>`", path, n, v, commitPrefix)
			}
			c.Commit = v
		case strings.HasPrefix(line, eventPrefix):
			c.Event = strings.TrimPrefix(line, eventPrefix)
		case strings.HasPrefix(line, tagPrefix):
			c.PreviousTag = strings.TrimPrefix(line, tagPrefix)
		case strings.HasPrefix(line, reasonPrefix) && c.Reason == "":
			c.Reason = line
		case strings.HasPrefix(line, notePrefix):
			c.Note = line
		}
	}
	if err := sc.Err(); err != nil {
		return nil, exit.Refusef("reading %s: %w", path, err)
	}
	if c.Commit == "" {
		return nil, exit.Refusef("%s names no base (no %s<hash>` line), so the gate named no base: run `perfgate base` again", path, commitPrefix)
	}
	if c.Note == "" {
		return nil, exit.Refusef("%s names the base %s but has no %q release-notes line: run `perfgate base` again", path, event.ShortSHA(c.Commit), notePrefix)
	}
	return c, nil
}
