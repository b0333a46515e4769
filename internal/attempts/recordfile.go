package attempts

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/perfgate/perfgate/internal/exit"
)

// RecordFile is the record's name in an attempt's report folder.
const RecordFile = "attempt.json"

// WriteRecord keeps r at path for the verdict job.
func WriteRecord(path string, r Record) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("keeping the attempt's record: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("keeping the attempt's record: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("keeping the attempt's record: %w", err)
	}
	return nil
}

// ReadRecord reads a record `attempts next` kept.
func ReadRecord(path string) (Record, error) {
	var r Record
	b, err := os.ReadFile(path)
	if err != nil {
		return r, fmt.Errorf("reading the attempt's record: %w", err)
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, exit.Refusef("%s: not an attempt record (%v): it is written by `perfgate attempts next`", path, err)
	}
	if r.Attempt < 1 {
		return r, exit.Refusef("%s: attempt %d: an attempt record counts from 1; it is written by `perfgate attempts next`", path, r.Attempt)
	}
	return r, nil
}
