package host_test

import (
	"fmt"
	"net"
	"os"
	"testing"

	"github.com/perfgate/perfgate/internal/host"
)

// The arms' ports lie below the ephemeral range, where no outgoing
// connection takes them, and are free to bind once FreePorts returns.
func TestFreePortsAvoidEphemeralRange(t *testing.T) {
	// Where the ephemeral range leaves too little room below it (or there
	// is none to read), FreePorts takes the kernel's choice: the ports must
	// then still be distinct and free, which the loop below checks.
	first := 0
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		var last int
		if _, err := fmt.Sscan(string(b), &first, &last); err != nil {
			t.Fatalf("reading ip_local_port_range %q: %v", b, err)
		}
	}
	below := first >= 21000
	seen := map[int]bool{}
	for range 20 {
		ports, err := host.FreePorts(2)
		if err != nil {
			t.Fatal(err)
		}
		if ports[0] == ports[1] {
			t.Fatalf("FreePorts(2) = %v: the same port twice", ports)
		}
		for _, p := range ports {
			if below && (p < 20000 || p >= first) {
				t.Fatalf("port %d outside [20000, %d): an outgoing connection may take it", p, first)
			}
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
			if err != nil {
				t.Fatalf("port %d from FreePorts is not free: %v", p, err)
			}
			l.Close()
			seen[p] = true
		}
	}
	if below && len(seen) < 30 {
		t.Errorf("40 ports drawn, only %d distinct: the draw is not spread over the range", len(seen))
	}
}
