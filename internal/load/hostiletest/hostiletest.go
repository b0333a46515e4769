// Package hostiletest serves targets that break HTTP without end (an
// endless 1xx, endless header lines, a huge body, never answering): the
// load engine's tests and the CLI's signal tests drive them, in process or
// as an arm's process, and every run against them must still end by its
// timeouts or at once on a cancel.
package hostiletest

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfgate/perfgate/internal/load"
)

// Target is a target that never finishes an answer: what it streams after
// each request head, for as long as the connection stays open.
type Target struct {
	Name    string
	Head    string // written once after the request head
	Repeat  string // then written again and again ("" writes nothing more)
	ErrKind string // what every request to it fails with (a load.Kind*)
}

// Endless are the hostile targets: each request ends by a bound of the
// response parser (malformed) or by its own timeout.
var Endless = []Target{
	{"endless 1xx", "", "HTTP/1.1 100 Continue\r\n\r\n", load.KindMalformed},
	{"endless header lines", "HTTP/1.1 200 OK\r\n", "X-Pad: aaaaaaaa\r\n", load.KindMalformed},
	{"endless status line", "", strings.Repeat("A", 512), load.KindMalformed},
	{"never answering", "", "", load.KindTimeout},
	{"endless garbage", "", "\x00\x01garbage\r\n", load.KindMalformed},
	{"huge body", "HTTP/1.1 200 OK\r\nContent-Length: 1099511627776\r\n\r\n", strings.Repeat("b", 16<<10), load.KindTimeout},
	{"endless chunks", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", "4000\r\n" + strings.Repeat("c", 0x4000) + "\r\n", load.KindTimeout},
}

// Find returns the target named name.
func Find(name string) (Target, bool) {
	for _, t := range Endless {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// Server serves one Target on a listener.
type Server struct {
	l       net.Listener
	t       Target
	healthz string

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup

	requests atomic.Int64
}

// Requests is how many requests got the hostile answer so far.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Serve answers every connection on l as t does until Close. A request
// for healthz (when not empty) is answered 200 instead, so an arm made of
// it passes its ready probe and turns hostile only under load.
func Serve(l net.Listener, t Target, healthz string) *Server {
	s := &Server{l: l, t: t, healthz: healthz, conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s
}

// Start serves t on a loopback port until the test ends and returns its
// base URL.
func Start(tb testing.TB, t Target) string {
	tb.Helper()
	return StartServer(tb, t).URL()
}

// StartServer is Start returning the server, whose Requests tell a test
// how far a run against it has come.
func StartServer(tb testing.TB, t Target) *Server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := Serve(l, t, "")
	tb.Cleanup(s.Close)
	return s
}

// URL is the server's base URL.
func (s *Server) URL() string { return "http://" + s.l.Addr().String() }

// ClosedPort is a loopback address nothing listens on: the target of a
// run in which every connection is refused.
func ClosedPort(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// Close stops accepting, closes every connection and waits for their
// goroutines.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.l.Close()
	s.wg.Wait()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(c)
			c.Close()
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
		}()
	}
}

func (s *Server) handle(c net.Conn) {
	br := bufio.NewReader(c)
	for {
		path, ok := readHead(br)
		if !ok {
			return
		}
		if s.healthz == "" || path != s.healthz {
			break
		}
		if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")); err != nil {
			return
		}
	}
	s.requests.Add(1)
	if s.t.Head == "" && s.t.Repeat == "" {
		io.Copy(io.Discard, br) // never answers: reads until either side closes
		return
	}
	// Keep reading, so the client's writes never block on a full window.
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var b [4096]byte
		for {
			if _, err := br.Read(b[:]); err != nil {
				return
			}
		}
	}()
	if s.t.Head != "" {
		if _, err := c.Write([]byte(s.t.Head)); err != nil {
			return
		}
	}
	if s.t.Repeat == "" {
		return
	}
	chunk := []byte(strings.Repeat(s.t.Repeat, max(1, (64<<10)/len(s.t.Repeat))))
	for {
		if _, err := c.Write(chunk); err != nil {
			return
		}
	}
}

// readHead reads a request head and returns its path; false at EOF.
func readHead(br *bufio.Reader) (path string, ok bool) {
	first := true
	for {
		line, err := br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull {
			return "", false
		}
		if first {
			if f := bytes.Fields(line); len(f) >= 2 {
				path = string(f[1])
			}
			first = false
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 && err == nil {
			return path, true
		}
	}
}
