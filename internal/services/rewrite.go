package services

import (
	"regexp"
	"strconv"
)

var addrPort = regexp.MustCompile(`(127\.0\.0\.1|localhost):([0-9]{1,5})`)

// Rewrite returns the base arm's config with each address of a moved port
// (127.0.0.1:PORT or localhost:PORT) pointed at 127.0.0.2:PORT. Nothing
// else changes: other ports, other hosts and shared services keep their
// addresses, so the base reaches the groups it shares with the head.
func (p *Plan) Rewrite(config []byte) []byte {
	moved := map[int]bool{}
	for _, m := range p.Moved {
		if lo, hi, ok := portRange(m.Port); ok {
			for port := lo; port <= hi; port++ {
				moved[port] = true
			}
		}
	}
	if len(moved) == 0 {
		return append([]byte(nil), config...)
	}
	out := make([]byte, 0, len(config))
	last := 0
	for _, m := range addrPort.FindAllSubmatchIndex(config, -1) {
		hostStart, hostEnd, portStart, portEnd := m[2], m[3], m[4], m[5]
		if hostStart > 0 && partOfName(config[hostStart-1]) {
			continue // "mylocalhost:80", "10.127.0.0.1:80"
		}
		if portEnd < len(config) && config[portEnd] >= '0' && config[portEnd] <= '9' {
			continue // more than five digits: not a port
		}
		port, err := strconv.Atoi(string(config[portStart:portEnd]))
		if err != nil || !moved[port] {
			continue
		}
		out = append(out, config[last:hostStart]...)
		out = append(out, BaseHost...)
		last = hostEnd
	}
	return append(out, config[last:]...)
}

func partOfName(c byte) bool {
	return c == '.' || c == '-' || c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
