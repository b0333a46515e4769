package host

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
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
func FreePorts(n int) ([]int, error) {
	lo, hi := belowEphemeral()
	ports := make([]int, 0, n)
	for range n {
		l, err := listenFree(lo, hi)
		if err != nil {
			return nil, fmt.Errorf("finding a free loopback port: %w", err)
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
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

// listenFree binds a free loopback port in [lo, hi), or any the kernel
// gives when the range is empty or taken.
func listenFree(lo, hi int) (net.Listener, error) {
	for range 64 {
		if hi <= lo {
			break
		}
		if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo)))); err == nil {
			return l, nil
		}
	}
	return net.Listen("tcp", "127.0.0.1:0")
}
