package host

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// FreePorts finds n distinct free loopback ports: for the arms, their
// stores and anything else perfgate starts and must name a port for
// before it binds (every such port is picked here, so one policy holds
// for all). They come
// from below the kernel's ephemeral range (ip_local_port_range): a port that
// bind(0) hands out lies inside it, where any outgoing connection on the
// runner may take it as its source port in the seconds between the choice
// and the arm's own bind (the store starts in between). That was seen as
// "bind: address already in use" with other tests connecting meanwhile.
// Every candidate is bound once to check that nobody listens on it, and held
// until all are chosen.
//
// A port handed out is also written down for Reserved (2 minutes) in a
// file every perfgate process on the machine shares, and no other
// perfgate process picks it meanwhile: two gates side by side drew the
// same port in the seconds before the first one's arm bound it, and that
// arm exited with "address already in use" (a rehearsal's
// TestMeasuredBlindIdleControlCannotBeJudged, beside three other gates).
// It does not keep out programs other than perfgate.
func FreePorts(n int) ([]int, error) {
	lo, hi := belowEphemeral()
	return freePorts(n, lo, hi, filepath.Join(os.TempDir(), reservationsFile), time.Now())
}

// Reserved is how long a port FreePorts handed out stays out of every
// other perfgate process's choice: past an arm's start, its store's
// start in between.
const Reserved = 2 * time.Minute

// reservationsFile is the shared list of ports handed out, in the temp
// folder: one "port unix-seconds" a line.
const reservationsFile = "perfgate-ports-reserved"

func freePorts(n, lo, hi int, path string, now time.Time) ([]int, error) {
	// A list this process may not write (another user's, say) leaves
	// only the bind check, as before there was a list.
	res, err := lockReservations(path)
	if err != nil {
		res = &reservations{lines: map[int]int64{}}
	}
	defer res.close()
	taken := res.recent(now)
	ports := make([]int, 0, n)
	for range n {
		l, err := listenFree(lo, hi, taken)
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		defer l.Close()
		p := l.Addr().(*net.TCPAddr).Port
		ports = append(ports, p)
		taken[p] = true
	}
	// The ports are free whether or not the list could be written.
	_ = res.write(now, ports)
	return ports, nil
}

// reservations is the shared list, locked (flock) while one process
// chooses.
type reservations struct {
	f     *os.File
	lines map[int]int64 // port: when it was handed out, unix seconds
}

func lockReservations(path string) (*reservations, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, fmt.Errorf("opening the list of reserved ports %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking the list of reserved ports %s: %w", path, err)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("reading the list of reserved ports %s: %w", path, err)
	}
	r := &reservations{f: f, lines: map[int]int64{}}
	for _, line := range strings.Split(string(b), "\n") {
		var port int
		var at int64
		if _, err := fmt.Sscan(line, &port, &at); err == nil {
			r.lines[port] = at // a line that does not parse is dropped
		}
	}
	return r, nil
}

// recent is the set of ports handed out less than Reserved before now.
func (r *reservations) recent(now time.Time) map[int]bool {
	taken := map[int]bool{}
	for p, at := range r.lines {
		if now.Sub(time.Unix(at, 0)) < Reserved {
			taken[p] = true
		}
	}
	return taken
}

// write adds ports at now and keeps only the lines still within Reserved.
func (r *reservations) write(now time.Time, ports []int) error {
	if r.f == nil {
		return nil
	}
	for _, p := range ports {
		r.lines[p] = now.Unix()
	}
	var b strings.Builder
	for p, at := range r.lines {
		if now.Sub(time.Unix(at, 0)) < Reserved {
			fmt.Fprintf(&b, "%d %d\n", p, at)
		}
	}
	if err := r.f.Truncate(0); err != nil {
		return fmt.Errorf("writing the list of reserved ports: %w", err)
	}
	if _, err := r.f.WriteAt([]byte(b.String()), 0); err != nil {
		return fmt.Errorf("writing the list of reserved ports: %w", err)
	}
	return nil
}

// close unlocks the list (closing the file drops the flock).
func (r *reservations) close() {
	if r.f != nil {
		r.f.Close()
	}
}

// belowEphemeral is the range arms' ports are drawn from: from 20000 (above
// the ports development servers like) to the start of the ephemeral range;
// empty when a runner's ephemeral range leaves less than 1000 ports there.
func belowEphemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	var first, last int
	if _, err := fmt.Sscan(string(b), &first, &last); err != nil || first-20000 < 1000 {
		return 0, 0
	}
	return 20000, first
}

// listenFree binds a free loopback port in [lo, hi) that taken does not
// hold, or any the kernel gives when the range is empty or taken.
func listenFree(lo, hi int, taken map[int]bool) (net.Listener, error) {
	for range 64 {
		if hi <= lo {
			break
		}
		p := lo + rand.IntN(hi-lo)
		if taken[p] {
			continue
		}
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			return l, nil
		}
	}
	for range 64 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil || !taken[l.Addr().(*net.TCPAddr).Port] {
			return l, err
		}
		l.Close()
	}
	return nil, fmt.Errorf("every port tried is reserved by another perfgate process")
}
