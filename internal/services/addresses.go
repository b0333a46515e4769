package services

import (
	"net"
	"sort"
)

// Addresses lists, service by service, the loopback addresses (host:port,
// one a published port) that one arm reaches its services at: for the
// head every service of its own tree; for the base its own copy of each
// group that differs (on 127.0.0.2) and the head's services of the groups
// both share. The gate writes them into the files a contract has
// generated per arm (docs/contract.md), as FerroFED's gate writes its
// registry document.
func (p *Plan) Addresses(base bool) map[string][]string {
	out := map[string][]string{}
	for _, g := range p.Groups {
		src := p.head
		if base && g.Copied {
			src = p.base
		}
		if src == nil || src.project == nil {
			continue
		}
		for _, name := range g.Services {
			s, ok := src.project.Services[name]
			if !ok {
				continue
			}
			addrs := []string{}
			for _, port := range s.Ports {
				if port.Published == "" {
					continue
				}
				host := port.HostIP
				switch {
				case base && g.Copied && isMovable(host):
					host = BaseHost
				case host == "" || host == "0.0.0.0" || host == "localhost":
					// Published on every interface (or by name): reached on loopback.
					host = "127.0.0.1"
				}
				addrs = append(addrs, net.JoinHostPort(host, port.Published))
			}
			sort.Strings(addrs)
			out[name] = addrs
		}
	}
	return out
}
