package load

import (
	"bytes"
	"strconv"
)

// parseServerTiming reads `Server-Timing: total;dur=12.5, db;dur=4` and
// returns microseconds. Metrics often nest (db inside app), so summing them
// would double count: the metric named "total" wins, else the largest dur.
func parseServerTiming(v []byte) (int64, bool) {
	best, found := -1.0, false
	for len(v) > 0 {
		var metric []byte
		metric, v = cutByte(v, ',')
		// The parameters are walked in place: this runs for every answer
		// that carries the header, and the parser allocates nothing per
		// answer.
		name, params := cutByte(metric, ';')
		name = bytes.TrimSpace(name)
		for len(params) > 0 {
			var p []byte
			p, params = cutByte(params, ';')
			p = bytes.TrimSpace(p)
			if len(p) < 4 || !asciiEqualFoldB(p[:4], "dur=") {
				continue
			}
			ms, err := strconv.ParseFloat(string(bytes.Trim(p[4:], `"`)), 64)
			if err != nil || ms < 0 {
				continue
			}
			if asciiEqualFoldB(name, "total") {
				return int64(ms * 1000), true
			}
			if ms > best {
				best, found = ms, true
			}
		}
	}
	return int64(best * 1000), found
}

// cutByte splits b at its first sep: before is all of b when there is none.
func cutByte(b []byte, sep byte) (before, after []byte) {
	if i := bytes.IndexByte(b, sep); i >= 0 {
		return b[:i], b[i+1:]
	}
	return b, nil
}

// parseMillis reads a header holding milliseconds ("12.5", or "12.5ms").
func parseMillis(v []byte) (int64, bool) {
	v = bytes.TrimSuffix(bytes.TrimSpace(v), []byte("ms"))
	ms, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil || ms < 0 {
		return 0, false
	}
	return int64(ms * 1000), true
}
