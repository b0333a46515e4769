package load

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"time"
)

// The engine speaks HTTP/1.1 itself instead of going through net/http: one
// goroutine owns one keep-alive connection, writes a request with one write
// (a body past 16 KiB follows in a second, from the request's own bytes)
// and parses the response in place from a bufio.Reader, with no per-request
// allocation. That is what lets one core offer more than twice vegeta's rate
// (see docs/load.md); it only needs what a load generator needs: status,
// framing (Content-Length, chunked, close-delimited), Connection: close and
// the server-timing header.

// endpoint is where and how to connect, resolved once per attack.
type endpoint struct {
	addr     string // ip:port, dialled directly
	host     string // Host header value
	prefix   string // the target URL's path, prepended to every request path
	tls      *tls.Config
	timeout  time.Duration
	timingHd []byte // the named server-timing header, lower case; nil for Server-Timing
	hit      *hitMatch
	answers  []*answerMatch // index = Request.Group; nil where a group checks no answer
}

// answer is group g's answer rule, nil when it has none.
func (ep *endpoint) answer(g int) *answerMatch {
	if g < 0 || g >= len(ep.answers) {
		return nil
	}
	return ep.answers[g]
}

type conn struct {
	nc   net.Conn
	rw   io.ReadWriter // raw syscalls on plain TCP (see rawio_linux.go), else nc
	br   *bufio.Reader
	wbuf []byte
	p    respParser
	idle time.Time // when its last exchange ended
}

// response is what one exchange yields.
type response struct {
	status    int
	bytesIn   uint64
	bytesOut  uint64
	serverDur int64         // µs; -1 when the target sent none
	hit       bool          // the answer is a hit by the attack's HitRule
	hitBeyond bool          // the rule's JSON field lay past MaxHitBody: a miss
	wrong     bool          // an expected status, but the answer fails its group's AnswerRule
	sample    *AnswerSample // the attack's first wrong answer of its group, else nil
}

var errMalformed = errors.New("malformed response")

func dial(ctx context.Context, ep *endpoint) (*conn, error) {
	d := net.Dialer{Timeout: ep.timeout}
	nc, err := d.DialContext(ctx, "tcp", ep.addr)
	if err != nil {
		return nil, err
	}
	if ep.tls != nil {
		tc := tls.Client(nc, ep.tls)
		hctx, cancel := context.WithTimeout(ctx, ep.timeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			nc.Close()
			return nil, &tlsError{err}
		}
		nc = tc
	}
	var rw io.ReadWriter = nc
	if ep.tls == nil {
		if raw := newRawIO(nc); raw != nil {
			rw = raw
		}
	}
	return &conn{nc: nc, rw: rw, br: bufio.NewReaderSize(rw, 4096), wbuf: make([]byte, 0, 512)}, nil
}

type tlsError struct{ err error }

func (e *tlsError) Error() string { return "tls handshake: " + e.err.Error() }
func (e *tlsError) Unwrap() error { return e.err }

func (c *conn) close() { c.nc.Close() }

// closedByTarget says whether the target closed c, or sent what nobody
// asked for, while it sat idle: a read that may not wait finds EOF, an
// error or bytes instead of nothing yet. The caller's next SetDeadline
// replaces the one set here.
func (c *conn) closedByTarget() bool {
	c.nc.SetReadDeadline(time.Now())
	_, err := c.br.Peek(1)
	return !errors.Is(err, os.ErrDeadlineExceeded)
}

// do sends req and reads the whole response. keep is false when the
// connection cannot be reused.
func (c *conn) do(ep *endpoint, req *Request) (resp response, keep bool, err error) {
	resp.serverDur = -1
	b, rest := appendRequest(c.wbuf[:0], ep, req)
	c.wbuf = b[:0]
	n, err := c.rw.Write(b)
	if err == nil && len(rest) > 0 {
		var m int
		m, err = c.rw.Write(rest)
		n += m
	}
	resp.bytesOut = uint64(n)
	if err != nil {
		// A target may answer (413, 431) and close before taking the
		// whole request: if its answer arrived, that answer is the result.
		if early, _, rerr := c.readAnswer(ep, req.Method == "HEAD", ep.answer(req.Group), resp); rerr == nil {
			return early, false, nil
		}
		return resp, false, err
	}
	return c.readAnswer(ep, req.Method == "HEAD", ep.answer(req.Group), resp)
}

// read reads the response to the request just sent, feeding the parser
// what the bufio.Reader holds and leaving any bytes after the response
// buffered. resp carries bytesOut from the caller.
func (c *conn) read(ep *endpoint, head bool, resp response) (response, bool, error) {
	return c.readAnswer(ep, head, nil, resp)
}

// readAnswer is read checking the answer against am (nil: no rule).
func (c *conn) readAnswer(ep *endpoint, head bool, am *answerMatch, resp response) (response, bool, error) {
	p := &c.p
	p.begin(head, ep.timingHd, ep.hit, am)
	for {
		if c.br.Buffered() == 0 {
			if _, err := c.br.Peek(1); err != nil {
				if err == io.EOF {
					_, err = p.eof() // nil for a body delimited by the close
				}
				return c.result(resp), false, err
			}
		}
		b, _ := c.br.Peek(c.br.Buffered())
		n, done, err := p.feed(b)
		c.br.Discard(n)
		if err != nil || done {
			return c.result(resp), p.keep(), err
		}
	}
}

func (c *conn) result(resp response) response {
	r := c.p.result()
	r.bytesOut = resp.bytesOut
	return r
}

func trunc(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}

func atoi(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// asciiEqualFold compares s with lowercase ASCII want.
func asciiEqualFold(s, want string) bool {
	if len(s) != len(want) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if lower(s[i]) != want[i] {
			return false
		}
	}
	return true
}

func asciiEqualFoldB(b []byte, want string) bool {
	if len(b) != len(want) {
		return false
	}
	for i := 0; i < len(b); i++ {
		if lower(b[i]) != want[i] {
			return false
		}
	}
	return true
}

// containsFold reports whether b contains lowercase ASCII want, any case.
func containsFold(b []byte, want string) bool {
	for i := 0; i+len(want) <= len(b); i++ {
		if asciiEqualFoldB(b[i:i+len(want)], want) {
			return true
		}
	}
	return false
}
