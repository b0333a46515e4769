package load

import (
	"strings"
	"testing"
)

// headOf is a response head of exactly size bytes (its empty last line
// included) whose body is "ok", padded with X-Pad lines of up to 4 KiB.
func headOf(size int) string {
	return padHead("HTTP/1.1 200 OK\r\n", "Content-Length: 2\r\n\r\n", size)
}

// padHead is first, X-Pad lines and last, size bytes in all.
func padHead(first, last string, size int) string {
	var b strings.Builder
	b.WriteString(first)
	left := size - len(first) - len(last)
	for left > 0 {
		n := min(left, 4000)
		if left-n > 0 && left-n < 16 {
			n = left - 16 // leave room for one more whole pad line
		}
		b.WriteString(pad("X-Pad", n))
		left -= n
	}
	b.WriteString(last)
	return b.String()
}

// TestParserBounds: a head at the bound parses, one byte over it is
// malformed, whatever the reads: whole, in the loop's 64 KiB reads, and split
// at every position around the bound. (parseCases, split at every position
// of the whole input, would take hours at these sizes.)
func TestParserBounds(t *testing.T) {
	t.Parallel()
	if got := len(headOf(maxHead)); got != maxHead {
		t.Fatalf("headOf(%d) is %d bytes", maxHead, got)
	}
	tail := "HTTP/1.1 200 OK\r\nServer-Timing: total;dur=1\r\n\r\n"
	cases := []parseCase{
		{name: "head at the bound", in: headOf(maxHead) + "ok", next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
		{name: "head one byte over", in: headOf(maxHead+1) + "ok", status: 200, err: errMalformed, errText: "response head over 1048576 bytes"},
		{name: "interim heads count toward the bound",
			in:     padHead("HTTP/1.1 103 Early Hints\r\n", "\r\n", maxHead-len(tail)+1) + tail,
			status: 200, err: errMalformed, errText: "response head over"},
		{name: "status line that never ends", in: strings.Repeat("A", maxHead+1), err: errMalformed, errText: "response head over"},
		{name: "endless trailers",
			in:     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("X-T: 1\r\n", maxHead/8+1),
			status: 200, err: errMalformed, errText: "response head over"},
	}
	var p respParser
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wire := tc.in + tc.next
			whole := parseParts(t, &p, tc, []string{wire})
			checkOutcome(t, tc, whole)
			var reads []string
			for rest := wire; rest != ""; {
				n := min(len(rest), 64<<10)
				reads, rest = append(reads, rest[:n]), rest[n:]
			}
			if o := parseParts(t, &p, tc, reads); !sameOutcome(o, whole) {
				t.Fatalf("in 64 KiB reads: %+v; whole: %+v", o, whole)
			}
			for i := max(0, maxHead-70); i <= min(len(wire), maxHead+70); i++ {
				if o := parseParts(t, &p, tc, []string{wire[:i], wire[i:]}); !sameOutcome(o, whole) {
					t.Fatalf("split at %d: %+v; whole: %+v", i, o, whole)
				}
			}
		})
	}
}
