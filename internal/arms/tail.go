package arms

import (
	"io"
	"os"
	"strings"
)

// readLast reads at most max bytes from the end of the file.
func readLast(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	off := st.Size() - max
	if off < 0 {
		off = 0
	}
	b := make([]byte, st.Size()-off)
	n, err := f.ReadAt(b, off)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return b[:n], nil
}

// tailFile returns the last n lines of the file at path ("" when unreadable).
func tailFile(path string, n int) string {
	b, err := readLast(path, 64<<10)
	if err != nil || n <= 0 {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
