package load

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// parseCase is one response as a target might send it. When the parser must
// finish, in is followed on the wire by next, the start of the following
// response, which the parser must leave alone.
type parseCase struct {
	name     string
	head     bool
	timingHd string // lower case; "" reads Server-Timing
	in       string
	next     string
	eof      bool // the peer closes after in+next

	done      bool
	status    int
	serverDur int64
	keep      bool
	err       error  // errors.Is target
	errText   string // in the message
}

const nextResp = "HTTP/1.1 200 OK\r\nContent-Le"

// pad is a header line of exactly size bytes, CRLF included.
func pad(name string, size int) string {
	return name + ": " + strings.Repeat("x", size-len(name)-4) + "\r\n"
}

var parseCases = []parseCase{
	{name: "content-length", in: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: true},
	{name: "content-length zero", in: "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n", next: nextResp,
		done: true, status: 201, serverDur: -1, keep: true},
	{name: "LF line ends", in: "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: true},
	{name: "header names any case", in: "HTTP/1.1 200 OK\r\ncontent-LENGTH: 3\r\nCONNECTION: Close\r\n\r\nabc", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: false},
	{name: "chunked with extension and trailer",
		in:   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;name=v\r\n world\r\n0\r\nX-Trailer: a\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "chunked among codings, hex digits any case",
		in:   "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, Chunked\r\n\r\na\r\n0123456789\r\nA \r\n0123456789\r\n0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "chunked wins over content-length",
		in:   "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "chunk spanning a 4 KB line",
		in:   "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1388\r\n" + strings.Repeat("\n", 5000) + "\r\n0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "interim responses skipped",
		in:   "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "interim close does not carry over",
		in:   "HTTP/1.1 100 Continue\r\nConnection: close\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "five interim answers, the most one request may get",
		in:   strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxInterim) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "interim server timing carries over",
		in:   "HTTP/1.1 103 Early Hints\r\nServer-Timing: total;dur=4\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: 4000, keep: true},
	{name: "HEAD with content-length", head: true, in: "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: true},
	{name: "HEAD chunked", head: true, in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: true},
	{name: "204 without length", in: "HTTP/1.1 204 No Content\r\n\r\n", next: nextResp,
		done: true, status: 204, serverDur: -1, keep: true},
	{name: "304 with content-length", in: "HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", next: nextResp,
		done: true, status: 304, serverDur: -1, keep: true},
	{name: "close-delimited", in: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close\r\n\r\nHTTP/1.1 200", eof: true,
		done: true, status: 200, serverDur: -1, keep: false},
	{name: "close-delimited empty", in: "HTTP/1.1 200 OK\r\n\r\n", eof: true,
		done: true, status: 200, serverDur: -1, keep: false},
	{name: "close-delimited still open", in: "HTTP/1.1 200 OK\r\n\r\nmore to come",
		done: false, status: 200, serverDur: -1},
	{name: "HTTP/1.0", in: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: false},
	{name: "HTTP/1.0 keep-alive", in: "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 2\r\n\r\nok", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: true},
	{name: "HTTP/1.1 keep-alive, close", in: "HTTP/1.1 200 OK\r\nConnection: keep-alive, close\r\nContent-Length: 2\r\n\r\nok", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: false},
	{name: "server-timing", in: "HTTP/1.1 200 OK\r\nserver-timing: db;dur=5, total;dur=20.5\r\nContent-Length: 0\r\n\r\n", next: nextResp,
		done: true, status: 200, serverDur: 20500, keep: true},
	{name: "named timing header", timingHd: "x-took-ms",
		in:   "HTTP/1.1 200 OK\r\nServer-Timing: total;dur=99\r\nX-Took-Ms: 7.5ms\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: 7500, keep: true},
	{name: "named timing header absent", timingHd: "x-took-ms",
		in:   "HTTP/1.1 200 OK\r\nServer-Timing: total;dur=99\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "named timing header ignored by default",
		in:   "HTTP/1.1 200 OK\r\nX-Took-Ms: 7.5\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "header longer than 4 KB", in: "HTTP/1.1 200 OK\r\n" + pad("X-Big", 9000) + "Content-Length: 2\r\n\r\nok", next: nextResp,
		done: true, status: 200, serverDur: -1, keep: true},
	{name: "long header read to 4 KB",
		in:   "HTTP/1.1 200 OK\r\nServer-Timing: total;dur=3, " + strings.Repeat("x", 5000) + "\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: 3000, keep: true},
	{name: "long header past 4 KB dropped",
		in:   "HTTP/1.1 200 OK\r\nServer-Timing: a" + strings.Repeat(" ", 4100) + ";dur=9\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "value in the last kept byte",
		in:   "HTTP/1.1 200 OK\r\nContent-Length:" + strings.Repeat(" ", maxLine-len("Content-Length:")-1) + "2\r\n\r\nok",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},

	{name: "value in the first dropped byte",
		in:     "HTTP/1.1 200 OK\r\nContent-Length:" + strings.Repeat(" ", maxLine-len("Content-Length:")) + "2\r\n\r\nok",
		status: 200, err: errMalformed, errText: `Content-Length ""`},
	{name: "empty", eof: true, err: io.ErrUnexpectedEOF},
	{name: "truncated status line", in: "HTTP/1.1 20", eof: true, err: io.ErrUnexpectedEOF},
	{name: "truncated header", in: "HTTP/1.1 200 OK\r\nContent-Le", eof: true, status: 200, err: io.ErrUnexpectedEOF},
	{name: "truncated body", in: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", eof: true, status: 200, err: io.ErrUnexpectedEOF},
	{name: "truncated chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", eof: true, status: 200, err: io.ErrUnexpectedEOF},
	{name: "truncated after chunk", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello", eof: true, status: 200, err: io.ErrUnexpectedEOF},
	{name: "truncated trailers", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX-T: 1\r\n", eof: true, status: 200, err: io.ErrUnexpectedEOF},
	{name: "truncated after interim", in: "HTTP/1.1 100 Continue\r\n\r\n", eof: true, status: 100, err: io.ErrUnexpectedEOF},
	{name: "six interim answers", in: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", maxInterim+1) + "HTTP/1.1 200 OK\r\n\r\n",
		status: 100, err: errMalformed, errText: "more than 5 interim (1xx) answers"},
	{name: "status line HTTP/2", in: "HTTP/2 200 OK\r\n\r\n", err: errMalformed, errText: `status line "HTTP/2 200 OK"`},
	{name: "status line not a number", in: "HTTP/1.1 2x0 OK\r\n\r\n", err: errMalformed, errText: `status line "HTTP/1.1 2x0 OK"`},
	{name: "status line short", in: "HTTP/1.1 20\r\n\r\n", err: errMalformed, errText: `status line "HTTP/1.1 20"`},
	{name: "status line garbage", in: "<html>hello</html>\r\n", err: errMalformed, errText: `status line "<html>hello</html>"`},
	{name: "long reason phrase", in: "HTTP/1.1 200 " + strings.Repeat("y", 100) + "\r\nContent-Length: 0\r\n\r\n",
		next: nextResp, done: true, status: 200, serverDur: -1, keep: true},
	{name: "header without colon", in: "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", status: 200, err: errMalformed, errText: `header line "no colon here"`},
	{name: "header without name", in: "HTTP/1.1 200 OK\r\n: v\r\n\r\n", status: 200, err: errMalformed, errText: `header line ": v"`},
	{name: "header error message truncated", in: "HTTP/1.1 200 OK\r\n" + strings.Repeat("z", 100) + "\r\n\r\n", status: 200,
		err: errMalformed, errText: `header line "` + strings.Repeat("z", 64) + `..."`},
	{name: "negative content-length", in: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", status: 200, err: errMalformed, errText: `Content-Length "-1"`},
	{name: "content-length not a number", in: "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n", status: 200, err: errMalformed, errText: `Content-Length "12a"`},
	{name: "chunk size not hex", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 200, err: errMalformed, errText: `chunk size "zz"`},
	{name: "chunk size negative", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5;x\r\n", status: 200, err: errMalformed, errText: `chunk size "-5"`},
	{name: "chunk size empty", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", status: 200, err: errMalformed, errText: `chunk size ""`},
	{name: "chunk not followed by CRLF", in: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX\r\n0\r\n\r\n", status: 200,
		err: errMalformed, errText: "chunk not followed by CRLF"},
}

// outcome is what parsing one response yielded.
type outcome struct {
	consumed int
	done     bool
	resp     response
	keep     bool
	err      error
}

// parseParts feeds parts in turn to p, then reports the close if eof.
func parseParts(t *testing.T, p *respParser, tc parseCase, parts []string) outcome {
	t.Helper()
	var hd []byte
	if tc.timingHd != "" {
		hd = []byte(tc.timingHd)
	}
	p.reset(tc.head, hd)
	var o outcome
	for _, part := range parts {
		n, done, err := p.feed([]byte(part))
		o.consumed += n
		if done || err != nil {
			o.done, o.err = done, err
			break
		}
		if n != len(part) {
			t.Fatalf("feed consumed %d of %d bytes without finishing", n, len(part))
		}
	}
	if !o.done && o.err == nil && tc.eof {
		o.done, o.err = p.eof()
	}
	o.resp, o.keep = p.result(), p.keep()
	return o
}

// checkOutcome compares o with what tc wants: a finished response consumed
// exactly in, and nothing of next.
func checkOutcome(t *testing.T, tc parseCase, o outcome) {
	t.Helper()
	if tc.err != nil {
		if !errors.Is(o.err, tc.err) || !strings.Contains(o.err.Error(), tc.errText) {
			t.Fatalf("err = %v, want %v containing %q", o.err, tc.err, tc.errText)
		}
		if o.done || o.keep {
			t.Fatalf("done %v keep %v after an error", o.done, o.keep)
		}
		if o.resp.status != tc.status {
			t.Fatalf("status = %d, want %d", o.resp.status, tc.status)
		}
		return
	}
	if o.err != nil {
		t.Fatalf("err = %v", o.err)
	}
	want := response{status: tc.status, bytesIn: uint64(len(tc.in)), serverDur: tc.serverDur}
	if o.done != tc.done || o.resp != want || o.keep != tc.keep || o.consumed != len(tc.in) {
		t.Fatalf("done %v resp %+v keep %v consumed %d; want done %v resp %+v keep %v consumed %d",
			o.done, o.resp, o.keep, o.consumed, tc.done, want, tc.keep, len(tc.in))
	}
}

// TestParserSplits feeds every response whole, a byte at a time, and split
// in two at every position: where the reads fall must not matter.
func TestParserSplits(t *testing.T) {
	t.Parallel()
	var p respParser // one parser throughout: reset must forget the last response
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			wire := tc.in + tc.next
			whole := parseParts(t, &p, tc, []string{wire})
			checkOutcome(t, tc, whole)

			bytewise := make([]string, len(wire))
			for i := range wire {
				bytewise[i] = wire[i : i+1]
			}
			if o := parseParts(t, &p, tc, bytewise); !sameOutcome(o, whole) {
				t.Fatalf("a byte at a time: %+v; whole: %+v", o, whole)
			}
			for i := 0; i <= len(wire); i++ {
				if o := parseParts(t, &p, tc, []string{wire[:i], wire[i:]}); !sameOutcome(o, whole) {
					t.Fatalf("split at %d: %+v; whole: %+v", i, o, whole)
				}
			}
		})
	}
}

func sameOutcome(a, b outcome) bool {
	if (a.err == nil) != (b.err == nil) || (a.err != nil && a.err.Error() != b.err.Error()) {
		return false
	}
	a.err, b.err = nil, nil
	return a == b
}

func TestParserAfterEnd(t *testing.T) {
	tests := []struct {
		name string
		in   string
		eof  bool
		done bool
		err  error
	}{
		{"fed after done", "HTTP/1.1 204 No Content\r\n\r\n", false, true, nil},
		{"fed after close-delimited eof", "HTTP/1.1 200 OK\r\n\r\nbody", true, true, nil},
		{"fed after malformed", "HTTP/1.1 200 OK\r\nbad\r\n", false, false, errMalformed},
		{"fed after truncated eof", "HTTP/1.1 200 OK\r\n", true, false, io.ErrUnexpectedEOF},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p respParser
			p.reset(false, nil)
			p.feed([]byte(tc.in))
			if tc.eof {
				p.eof()
			}
			before := p.result()
			n, done, err := p.feed([]byte("HTTP/1.1 200 OK\r\n"))
			if n != 0 || done != tc.done || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("feed = %d, %v, %v; want 0, %v, %v", n, done, err, tc.done, tc.err)
			}
			if done, err := p.eof(); done != tc.done || !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("eof = %v, %v; want %v, %v", done, err, tc.done, tc.err)
			}
			if p.result() != before {
				t.Errorf("result changed from %+v to %+v", before, p.result())
			}
		})
	}
}

// TestConnReadFraming runs the same responses through the blocking client,
// over reads of every size: the response is read, the next one left
// buffered, and bytesOut kept from the caller.
func TestConnReadFraming(t *testing.T) {
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte per read", iotest.OneByteReader},
		{"data with EOF", iotest.DataErrReader},
	}
	c := &conn{}
	for _, tc := range parseCases {
		if !tc.eof && !tc.done && tc.err == nil {
			continue // a blocking read waits for the close
		}
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				// A reader ends in EOF, so what the target sends is all it sends.
				wire := tc.in + tc.next
				c.br = bufio.NewReaderSize(rd.wrap(strings.NewReader(wire)), 4096)
				ep := &endpoint{}
				if tc.timingHd != "" {
					ep.timingHd = []byte(tc.timingHd)
				}
				resp, keep, err := c.read(ep, tc.head, response{bytesOut: 77, serverDur: 12345, status: 999})
				if resp.bytesOut != 77 {
					t.Errorf("bytesOut = %d, want the caller's 77", resp.bytesOut)
				}
				resp.bytesOut = 0
				rest, _ := io.ReadAll(c.br)
				if tc.err == nil && string(rest) != tc.next {
					t.Errorf("left %q unread, want %q", rest, tc.next)
				}
				checkOutcome(t, tc, outcome{consumed: len(wire) - len(rest), done: err == nil, resp: resp, keep: keep, err: err})
			})
		}
	}
}

// TestConnReadFramingTransportError keeps a transport error as it is: only a
// close makes a truncated response.
func TestConnReadFramingTransportError(t *testing.T) {
	timeout := errors.New("i/o timeout")
	for _, in := range []string{"", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\n\r\nclose-delimited"} {
		c := &conn{br: bufio.NewReaderSize(io.MultiReader(strings.NewReader(in), iotest.ErrReader(timeout)), 4096)}
		resp, keep, err := c.read(&endpoint{}, false, response{bytesOut: 5})
		if !errors.Is(err, timeout) || keep || resp.bytesIn != uint64(len(in)) || resp.bytesOut != 5 {
			t.Errorf("read %q then a timeout: resp %+v keep %v err %v; want the timeout and %d bytes in", in, resp, keep, err, len(in))
		}
	}
}

// TestConnReadFramingBackToBack reads responses back to back from one
// connection, as a kept-alive connection does.
func TestConnReadFramingBackToBack(t *testing.T) {
	var wire strings.Builder
	var want []parseCase
	for _, tc := range parseCases {
		if tc.done && tc.keep && !tc.head {
			wire.WriteString(tc.in)
			want = append(want, tc)
		}
	}
	c := &conn{br: bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(wire.String())), 4096)}
	for _, tc := range want {
		ep := &endpoint{}
		if tc.timingHd != "" {
			ep.timingHd = []byte(tc.timingHd)
		}
		resp, keep, err := c.read(ep, tc.head, response{})
		if err != nil || !keep || resp.status != tc.status || resp.bytesIn != uint64(len(tc.in)) || resp.serverDur != tc.serverDur {
			t.Fatalf("%s: resp %+v keep %v err %v; want status %d, %d bytes in", tc.name, resp, keep, err, tc.status, len(tc.in))
		}
	}
	if _, _, err := c.read(&endpoint{}, false, response{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("read after the last response: %v, want io.ErrUnexpectedEOF", err)
	}
}

const benchResp = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\nContent-Length: 13\r\n\r\nHello, world!"

// timedResp carries the timing header in the shapes targets send (a
// quoted description, nested metrics, total last), so the walk over its
// metrics and parameters is on the measured path.
const timedResp = "HTTP/1.1 200 OK\r\nServer-Timing: cache;desc=\"Cache Read\";dur=23.2, db;dur=5, total;dur=47.5\r\nContent-Length: 13\r\n\r\nHello, world!"

var allocCases = []struct {
	name      string
	timingHd  string // lower case; "" reads Server-Timing
	parts     []string
	serverDur int64 // what the timing header says, -1 for none
}{
	{"content-length", "", []string{benchResp}, -1},
	{"split line", "", []string{benchResp[:30], benchResp[30:]}, -1},
	{"chunked", "", []string{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nd;x=y\r\nHello, world!\r\n0\r\nX-T: 1\r\n\r\n"}, -1},
	{"Server-Timing", "", []string{timedResp}, 47500},
	{"Server-Timing split in a metric", "", []string{timedResp[:60], timedResp[60:]}, 47500},
	{"named timing header", "x-took-ms", []string{"HTTP/1.1 200 OK\r\nX-Took-Ms: 12.5ms\r\nContent-Length: 2\r\n\r\nok"}, 12500},
}

func TestParserNoAlloc(t *testing.T) {
	for _, tc := range allocCases {
		t.Run(tc.name, func(t *testing.T) {
			var p respParser
			parts := make([][]byte, len(tc.parts))
			for i, s := range tc.parts {
				parts[i] = []byte(s)
			}
			var timingHd []byte
			if tc.timingHd != "" {
				timingHd = []byte(tc.timingHd)
			}
			allocs := testing.AllocsPerRun(100, func() {
				p.reset(false, timingHd)
				for _, b := range parts {
					if _, _, err := p.feed(b); err != nil {
						t.Fatal(err)
					}
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per response, want 0", allocs)
			}
			if r := p.result(); !p.keep() || r.serverDur != tc.serverDur {
				t.Errorf("done %v, server time %d µs, want %d", p.keep(), r.serverDur, tc.serverDur)
			}
		})
	}
}

func BenchmarkParserFeed(b *testing.B) {
	for _, tc := range allocCases {
		b.Run(tc.name, func(b *testing.B) {
			var p respParser
			parts := make([][]byte, len(tc.parts))
			size := 0
			for i, s := range tc.parts {
				parts[i] = []byte(s)
				size += len(s)
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			var timingHd []byte
			if tc.timingHd != "" {
				timingHd = []byte(tc.timingHd)
			}
			for b.Loop() {
				p.reset(false, timingHd)
				for _, part := range parts {
					if _, _, err := p.feed(part); err != nil {
						b.Fatal(err)
					}
				}
				if !p.keep() {
					b.Fatal("benchmark response not complete")
				}
			}
		})
	}
}
