package load

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// respParser parses one HTTP/1.1 response incrementally, so the blocking
// client (conn.read) and a non-blocking engine share one parser: each feeds
// whatever bytes it has and learns where the response ends. The zero value is
// not ready: call reset before each response.
//
// It allocates nothing per response: a line is parsed in place from the fed
// bytes, and copied into a reused buffer only when it spans two feeds.
type respParser struct {
	state    parseState
	head     bool
	timingHd []byte
	err      error // sticky: a malformed response stays malformed

	// hm is the attack's hit rule (hit.go), nil when it has none: then no
	// status or header is compared and no body byte kept. body keeps up to
	// MaxHitBody bytes of the body when the rule reads a JSON field; its
	// buffer is reused from response to response, like line's.
	hm      *hitMatch
	hit     bool
	beyond  bool // the field lay past MaxHitBody
	body    []byte
	bodyCut bool
	judged  bool
	checked bool // the answer rule has judged this answer

	// am is the request's group's answer rule (answer.go), nil when it has
	// none; seen holds which of its headers the answer carried.
	am     *answerMatch
	seen   uint32
	wrong  bool
	sample *AnswerSample

	// line holds the start of a line that did not end in the bytes fed so
	// far. Only its first maxLine bytes are kept: that is all the headers we
	// read need, and a hostile target cannot make the parser grow.
	line []byte

	status    int
	bytesIn   uint64
	serverDur int64

	// headBytes counts the bytes of every head line read for this request:
	// interim responses, the final head and any trailers; interim counts
	// the 1xx answers. Both are bounded (maxHead, maxInterim) so a target
	// streaming an endless head fails the request at once instead of
	// holding it until its timeout.
	headBytes int
	interim   int

	// the response being read (a 1xx one is followed by another)
	http10    bool
	length    int64 // Content-Length, -1 when absent
	chunked   bool
	closeConn bool
	keepAlive bool

	remain   int64 // body or chunk bytes still to skip
	keepConn bool
}

type parseState uint8

const (
	stStatus    parseState = iota
	stHeader               // header lines, up to the empty one
	stBody                 // Content-Length body: remain bytes left
	stClose                // body delimited by the peer closing
	stChunkSize            // a chunk-size line
	stChunkData            // remain bytes of chunk data left
	stChunkEnd             // the empty line after a chunk's data
	stTrailer              // trailers after the last chunk, up to the empty line
	stDone
)

// maxLine is as much of a line as is kept; the blocking client used to read
// lines through a 4 KB bufio.Reader and kept as much.
const maxLine = 4096

// maxHead bounds a response's head bytes (interim answers and trailers
// included), as net/http's server bounds a request's with its 1 MiB
// DefaultMaxHeaderBytes; maxInterim bounds its 1xx answers, as net/http's
// client does (5). A response over either is malformed.
const (
	maxHead    = 1 << 20
	maxInterim = 5
)

// reset prepares for the response to a request. head says the request was
// HEAD, whose response has no body. timingHd is the named server-timing
// header in lower case, or nil to read Server-Timing.
func (p *respParser) reset(head bool, timingHd []byte) {
	p.resetHit(head, timingHd, nil)
}

// resetHit is reset with the attack's hit rule (nil: none).
func (p *respParser) resetHit(head bool, timingHd []byte, hm *hitMatch) {
	line, body := p.line[:0], p.body[:0]
	*p = respParser{head: head, timingHd: timingHd, line: line, body: body, hm: hm, serverDur: -1, length: -1}
}

// begin is resetHit with the request's group's answer rule (nil: none).
func (p *respParser) begin(head bool, timingHd []byte, hm *hitMatch, am *answerMatch) {
	p.resetHit(head, timingHd, hm)
	p.am = am
}

// keepBody keeps body bytes for a hit field or an answer rule, up to
// MaxHitBody.
func (p *respParser) keepBody(b []byte) {
	if (p.hm == nil || p.hm.field == nil) && (p.am == nil || !p.am.readsBody()) {
		return
	}
	if room := MaxHitBody - len(p.body); len(b) > room {
		b, p.bodyCut = b[:room], true
	}
	if p.body == nil {
		p.body = make([]byte, 0, min(MaxHitBody, max(len(b), 4096)))
	}
	p.body = append(p.body, b...)
}

// feed parses bytes the socket returned and reports how many it consumed.
// Every byte is consumed unless the response completes (done) within b: the
// bytes after it belong to the next response and are left. err wraps
// errMalformed when the response cannot be parsed.
func (p *respParser) feed(b []byte) (n int, done bool, err error) {
	if p.err != nil {
		return 0, false, p.err
	}
	for p.state != stDone {
		if n == len(b) {
			return n, false, nil
		}
		switch p.state {
		case stBody, stChunkData:
			k := int64(len(b) - n)
			if k > p.remain {
				k = p.remain
			}
			p.keepBody(b[n : n+int(k)])
			n += int(k)
			p.bytesIn += uint64(k)
			p.remain -= k
			if p.remain == 0 {
				if p.state == stBody {
					p.state = stDone
				} else {
					p.state = stChunkEnd
				}
			}
		case stClose:
			p.keepBody(b[n:])
			p.bytesIn += uint64(len(b) - n)
			n = len(b)
		default:
			rest := b[n:]
			inHead := p.state == stStatus || p.state == stHeader || p.state == stTrailer
			if inHead && len(rest) > maxHead-p.headBytes {
				// Never past the bound's first byte over, so where the
				// reads split the head cannot change what is consumed.
				rest = rest[:maxHead-p.headBytes+1]
			}
			line, k, ok := p.takeLine(rest)
			n += k
			if inHead {
				if p.headBytes += k; p.headBytes > maxHead {
					p.err = fmt.Errorf("%w: response head over %d bytes", errMalformed, maxHead)
					return n, false, p.err
				}
			}
			if !ok {
				return n, false, nil
			}
			if err := p.onLine(line); err != nil {
				p.err = err
				return n, false, err
			}
		}
	}
	return n, true, nil
}

// eof reports that the peer closed the connection. That completes a body
// delimited by the close; anywhere else in a response the response is
// truncated. After the response completed, it changes nothing.
func (p *respParser) eof() (done bool, err error) {
	switch {
	case p.err != nil:
		return false, p.err
	case p.state == stDone:
		return true, nil
	case p.state == stClose:
		p.state = stDone
		return true, nil
	}
	p.err = io.ErrUnexpectedEOF
	return false, p.err
}

// result is the response read: status (valid from the status line on),
// every byte consumed in bytesIn, and serverDur (-1 when none). bytesOut is
// the caller's.
func (p *respParser) result() response {
	if p.hm != nil && p.hm.field != nil && p.state == stDone && !p.judged {
		p.judged = true
		if p.status >= 200 && len(p.body) > 0 {
			p.hit, p.beyond = p.hm.bodyHit(p.body, p.bodyCut)
		}
	}
	if p.am != nil && p.state == stDone && !p.checked {
		p.checked = true
		p.wrong, p.sample = p.am.check(p.status, p.body, p.bodyCut, p.seen)
	}
	return response{status: p.status, bytesIn: p.bytesIn, serverDur: p.serverDur, hit: p.hit, hitBeyond: p.beyond,
		wrong: p.wrong, sample: p.sample}
}

// keep reports whether the connection may carry another request once the
// response is done.
func (p *respParser) keep() bool { return p.state == stDone && p.keepConn }

// takeLine consumes b up to and including its first LF and returns the line
// without its line end. ok is false when b holds no LF: its bytes are then
// consumed and kept until the line ends in a later feed.
func (p *respParser) takeLine(b []byte) (line []byte, n int, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		p.keepPart(b)
		p.bytesIn += uint64(len(b))
		return nil, len(b), false
	}
	n = i + 1
	p.bytesIn += uint64(n)
	if len(p.line) == 0 {
		line = b[:min(n, maxLine)]
	} else {
		p.keepPart(b[:n])
		line = p.line
		p.line = p.line[:0] // line stays valid: nothing is appended before it is parsed
	}
	return bytes.TrimRight(line, "\r\n"), n, true
}

func (p *respParser) keepPart(b []byte) {
	if p.line == nil {
		p.line = make([]byte, 0, maxLine)
	}
	if room := maxLine - len(p.line); len(b) > room {
		b = b[:room]
	}
	p.line = append(p.line, b...)
}

func (p *respParser) onLine(line []byte) error {
	switch p.state {
	case stStatus:
		return p.statusLine(line)
	case stHeader:
		if len(line) == 0 {
			return p.endHeader()
		}
		return p.header(line)
	case stChunkSize:
		if i := bytes.IndexByte(line, ';'); i >= 0 {
			line = line[:i] // chunk extensions
		}
		size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || size < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, trunc(line))
		}
		if size == 0 {
			p.state = stTrailer
		} else {
			p.remain, p.state = size, stChunkData
		}
	case stChunkEnd:
		if len(line) != 0 {
			return fmt.Errorf("%w: chunk not followed by CRLF", errMalformed)
		}
		p.state = stChunkSize
	case stTrailer:
		if len(line) == 0 {
			p.state = stDone
		}
	}
	return nil
}

// statusLine reads "HTTP/1.1 200 OK".
func (p *respParser) statusLine(line []byte) error {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return fmt.Errorf("%w: status line %q", errMalformed, trunc(line))
	}
	st, ok := atoi(line[9:12])
	if !ok {
		return fmt.Errorf("%w: status line %q", errMalformed, trunc(line))
	}
	p.status, p.http10, p.seen = st, line[7] == '0', 0
	p.hit = p.hm != nil && p.hm.status != nil && p.hm.statusHit(st)
	p.length, p.chunked, p.closeConn, p.keepAlive = -1, false, false, false
	p.state = stHeader
	return nil
}

func (p *respParser) header(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return fmt.Errorf("%w: header line %q", errMalformed, trunc(line))
	}
	name, val := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case asciiEqualFoldB(name, "content-length"):
		n, ok := atoi(val)
		if !ok {
			return fmt.Errorf("%w: Content-Length %q", errMalformed, trunc(val))
		}
		p.length = int64(n)
	case asciiEqualFoldB(name, "transfer-encoding"):
		p.chunked = containsFold(val, "chunked")
	case asciiEqualFoldB(name, "connection"):
		p.closeConn = containsFold(val, "close")
		p.keepAlive = containsFold(val, "keep-alive")
	case p.timingHd == nil && asciiEqualFoldB(name, "server-timing"):
		if us, ok := parseServerTiming(val); ok {
			p.serverDur = us
		}
	case p.timingHd != nil && equalFoldLower(name, p.timingHd):
		if us, ok := parseMillis(val); ok {
			p.serverDur = us
		}
	}
	if p.hm != nil && p.hm.header != nil && p.state == stHeader && p.hm.headerHit(name, val) {
		p.hit = true
	}
	if p.am != nil && p.am.headers != nil && p.state == stHeader {
		p.seen |= p.am.headerSeen(name, val)
	}
	return nil
}

// endHeader picks the body's framing once the header is read.
func (p *respParser) endHeader() error {
	if p.status >= 100 && p.status < 200 {
		if p.interim++; p.interim > maxInterim {
			return fmt.Errorf("%w: more than %d interim (1xx) answers to one request", errMalformed, maxInterim)
		}
		p.state = stStatus // interim response; the real one follows
		return nil
	}
	p.keepConn = !p.closeConn && (!p.http10 || p.keepAlive)
	switch {
	case p.head || p.status == 204 || p.status == 304:
		p.state = stDone
	case p.chunked:
		p.state = stChunkSize
	case p.length > 0:
		p.remain, p.state = p.length, stBody
	case p.length == 0:
		p.state = stDone
	default:
		p.state, p.keepConn = stClose, false
	}
	return nil
}

// equalFoldLower compares b with lowercase ASCII want, any case. Unlike
// asciiEqualFoldB it takes want as bytes, so a configured header name is
// never converted to a string per header line.
func equalFoldLower(b, want []byte) bool {
	if len(b) != len(want) {
		return false
	}
	for i := range b {
		if lower(b[i]) != want[i] {
			return false
		}
	}
	return true
}
