package load_test

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/load"
)

// hostileServer answers every connection with behave, run on its own
// goroutine; the test ends them by closing the listener and the conns.
func hostileServer(t *testing.T, behave func(c *net.TCPConn, br *bufio.Reader)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				behave(c.(*net.TCPConn), bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// readHead reads a request head, false at EOF.
func readHead(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(line) <= 2 {
			return true
		}
	}
}

// TestHostileTargets: every request to a target that breaks HTTP is counted
// once, as a failure of the right kind, and the run keeps its schedule.
func TestHostileTargets(t *testing.T) { bothEngines(t, testHostileTargets) }

func testHostileTargets(t *testing.T) {
	tests := []struct {
		name    string
		body    []byte
		behave  func(c *net.TCPConn, br *bufio.Reader)
		errKind string
		status  int // when the answer is a status, not an error
	}{
		{"reset mid-answer", nil, func(c *net.TCPConn, br *bufio.Reader) {
			if readHead(br) {
				c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial"))
				c.SetLinger(0) // close sends RST
			}
		}, "connection reset", 0},
		{"closed without an answer", nil, func(c *net.TCPConn, br *bufio.Reader) { readHead(br) }, "closed by target", 0},
		{"garbage", nil, func(c *net.TCPConn, br *bufio.Reader) {
			if readHead(br) {
				c.Write([]byte("SSH-2.0-OpenSSH_9.2\r\n\r\n"))
			}
		}, "malformed response", 0},
		{"answers before the body is sent", []byte(strings.Repeat("x", 4<<20)), func(c *net.TCPConn, br *bufio.Reader) {
			if readHead(br) {
				c.Write([]byte("HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
				time.Sleep(50 * time.Millisecond) // let the answer land before the close
				io.CopyN(io.Discard, br, 64<<10)
			}
		}, "", 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			target := hostileServer(t, tc.behave)
			src := &fixedSource{reqs: []load.Request{{Method: "POST", Path: "/x", Body: tc.body}}}
			r := run(t, load.Attack{Target: target, Source: src, Groups: []load.Group{{Name: "x", Expect: []int{200}}},
				Pacer: load.ConstantPacer{Freq: 50}, Duration: time.Second, Timeout: 2 * time.Second})
			g, s := r.Groups[0], r.Schedule
			if s.Intended != 50 || s.Sent+s.Dropped != s.Intended || g.Requests+s.Canceled != s.Sent {
				t.Fatalf("intended %d sent %d dropped %d requests %d canceled %d: arrivals went missing", s.Intended, s.Sent, s.Dropped, g.Requests, s.Canceled)
			}
			if g.Requests != 50 || g.Expected != 0 {
				t.Errorf("requests %d expected %d, want 50 failures", g.Requests, g.Expected)
			}
			switch {
			case tc.errKind != "" && g.Errors[tc.errKind] < 45:
				t.Errorf("errors %v statuses %v, want (nearly) all %q", g.Errors, g.Statuses, tc.errKind)
			case tc.status != 0 && g.Statuses[tc.status] < 45:
				t.Errorf("statuses %v errors %v, want (nearly) all %d", g.Statuses, g.Errors, tc.status)
			}
		})
	}
}
