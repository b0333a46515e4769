package load

import "net"

// IsLoopback reports whether host (a name or an address, without a port)
// is this machine's loopback: perfgate only loads, probes and reads
// services there. The plan's counters and the contract's arms both ask it.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
