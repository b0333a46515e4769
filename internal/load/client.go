package load

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// The engine speaks HTTP/1.1 itself instead of going through net/http: one
// goroutine owns one keep-alive connection, writes a request with one write
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
}

type conn struct {
	nc   net.Conn
	rw   io.ReadWriter // raw syscalls on plain TCP (see rawio_linux.go), else nc
	br   *bufio.Reader
	wbuf []byte
}

// response is what one exchange yields.
type response struct {
	status    int
	bytesIn   uint64
	bytesOut  uint64
	serverDur int64 // µs; -1 when the target sent none
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

// do sends req and reads the whole response. keep is false when the
// connection cannot be reused.
func (c *conn) do(ep *endpoint, req *Request) (resp response, keep bool, err error) {
	resp.serverDur = -1
	b := c.wbuf[:0]
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, ep.prefix...)
	b = append(b, req.Path...)
	b = append(b, " HTTP/1.1\r\n"...)
	hasHost, hasUA, hasLen := false, false, false
	for _, h := range req.Header {
		switch {
		case asciiEqualFold(h.Name, "host"):
			hasHost = true
		case asciiEqualFold(h.Name, "user-agent"):
			hasUA = true
		case asciiEqualFold(h.Name, "content-length"):
			hasLen = true
		}
		b = append(b, h.Name...)
		b = append(b, ": "...)
		b = append(b, h.Value...)
		b = append(b, "\r\n"...)
	}
	if !hasHost {
		b = append(b, "Host: "...)
		b = append(b, ep.host...)
		b = append(b, "\r\n"...)
	}
	if !hasUA {
		b = append(b, "User-Agent: perfgate\r\n"...)
	}
	if !hasLen && (len(req.Body) > 0 || req.Method == "POST" || req.Method == "PUT" || req.Method == "PATCH") {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, req.Body...)
	c.wbuf = b[:0]
	if _, err := c.rw.Write(b); err != nil {
		return resp, false, err
	}
	resp.bytesOut = uint64(len(b))
	return c.read(ep, req.Method == "HEAD", resp)
}

func (c *conn) read(ep *endpoint, head bool, resp response) (response, bool, error) {
	for {
		line, err := c.line(&resp)
		if err != nil {
			return resp, false, err
		}
		// "HTTP/1.1 200 OK"
		if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
			return resp, false, fmt.Errorf("%w: status line %q", errMalformed, trunc(line))
		}
		http10 := line[7] == '0'
		st, ok := atoi(line[9:12])
		if !ok {
			return resp, false, fmt.Errorf("%w: status line %q", errMalformed, trunc(line))
		}
		resp.status = st
		length, chunked, closeConn, keepAlive := int64(-1), false, false, false
		for {
			line, err := c.line(&resp)
			if err != nil {
				return resp, false, err
			}
			if len(line) == 0 {
				break
			}
			colon := bytes.IndexByte(line, ':')
			if colon <= 0 {
				return resp, false, fmt.Errorf("%w: header line %q", errMalformed, trunc(line))
			}
			name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
			switch {
			case asciiEqualFoldB(name, "content-length"):
				n, ok := atoi(val)
				if !ok {
					return resp, false, fmt.Errorf("%w: Content-Length %q", errMalformed, trunc(val))
				}
				length = int64(n)
			case asciiEqualFoldB(name, "transfer-encoding"):
				chunked = containsFold(val, "chunked")
			case asciiEqualFoldB(name, "connection"):
				closeConn = containsFold(val, "close")
				keepAlive = containsFold(val, "keep-alive")
			case ep.timingHd == nil && asciiEqualFoldB(name, "server-timing"):
				if us, ok := parseServerTiming(val); ok {
					resp.serverDur = us
				}
			case ep.timingHd != nil && asciiEqualFoldB(name, string(ep.timingHd)):
				if us, ok := parseMillis(val); ok {
					resp.serverDur = us
				}
			}
		}
		if st >= 100 && st < 200 {
			continue // interim response; the real one follows
		}
		keep := !closeConn && (!http10 || keepAlive)
		switch {
		case head || st == 204 || st == 304:
		case chunked:
			if err := c.discardChunked(&resp); err != nil {
				return resp, false, err
			}
		case length >= 0:
			n, err := c.br.Discard(int(length))
			resp.bytesIn += uint64(n)
			if err != nil {
				return resp, false, unexpectedEOF(err)
			}
		default:
			n, err := io.Copy(io.Discard, c.br)
			resp.bytesIn += uint64(n)
			return resp, false, err
		}
		return resp, keep, nil
	}
}

// line returns the next line without its CRLF. A line longer than the buffer
// is skipped down to its first 4 KB, which is all the headers we read need.
func (c *conn) line(resp *response) ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	resp.bytesIn += uint64(len(line))
	if errors.Is(err, bufio.ErrBufferFull) {
		line = append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			var more []byte
			more, err = c.br.ReadSlice('\n')
			resp.bytesIn += uint64(len(more))
		}
	}
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	line = bytes.TrimRight(line, "\r\n")
	return line, nil
}

func (c *conn) discardChunked(resp *response) error {
	for {
		line, err := c.line(resp)
		if err != nil {
			return err
		}
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i]
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, trunc(line))
		}
		if size == 0 {
			for { // trailers, up to the empty line
				l, err := c.line(resp)
				if err != nil {
					return err
				}
				if len(l) == 0 {
					return nil
				}
			}
		}
		n, err := c.br.Discard(int(size))
		resp.bytesIn += uint64(n)
		if err != nil {
			return unexpectedEOF(err)
		}
		if l, err := c.line(resp); err != nil {
			return err
		} else if len(l) != 0 {
			return fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
	}
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
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
