package services

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/compose-spec/compose-go/v2/types"

	"github.com/perfgate/perfgate/internal/exit"
)

// BaseSuffix names the base copy's compose project: <project>-perf-base.
const BaseSuffix = "-perf-base"

// BaseHost is where the base copy publishes what the head publishes on
// 127.0.0.1. Linux routes all of 127.0.0.0/8 to loopback without setup.
const BaseHost = "127.0.0.2"

// Plan says which services both arms share and which the base gets a copy of.
type Plan struct {
	Groups []Group
	// Project is the trees' compose project name; a run's projects are
	// ProjectName(Project, run id) for the head and that + BaseSuffix for
	// the base copy.
	Project string
	// Moved lists the base copy's published ports moved to 127.0.0.2.
	Moved []MovedPort
	// WaitTimeout bounds Up's wait for health (default 3 minutes).
	WaitTimeout time.Duration
	// DiffTime is how long Diff took (loading both trees included).
	DiffTime time.Duration

	head, base *loaded
}

// Group is a set of services connected by depends_on (in either tree).
type Group struct {
	Services []string
	// Copied: the group differs, so the base runs its own copy of it.
	Copied bool
	// Why names the difference that decided it ("identical" when shared).
	Why string
	// ByPath lists the host paths outside both trees that the group's
	// services mount or read: compared by their path, never by content.
	ByPath []string
}

// MovedPort is one published port of the base copy, moved from
// 127.0.0.1 or localhost to 127.0.0.2.
type MovedPort struct {
	Service  string
	From     string // the host address the base's tree names
	Port     string // published port or range ("8080", "9000-9005")
	Protocol string
}

// Diff loads both trees and decides, group by group, what the base shares
// with the head and what it gets its own copy of. A base that publishes a
// port beyond 127.0.0.1, localhost or 127.0.0.2, or whose copy would take
// the head's copy's host ports, is refused (exit 2) before anything starts.
func Diff(ctx context.Context, head, base Tree) (*Plan, error) {
	start := time.Now()
	var hl, bl *loaded
	var herr, berr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); hl, herr = load(ctx, head, "head") }()
	go func() { defer wg.Done(); bl, berr = load(ctx, base, "base") }()
	wg.Wait()
	if herr != nil {
		return nil, herr
	}
	if berr != nil {
		return nil, berr
	}
	if err := checkBasePorts(bl); err != nil {
		return nil, err
	}
	project := hl.project.Name
	p := &Plan{Project: project, head: hl, base: bl, WaitTimeout: 3 * time.Minute}

	cache := newContentCache(ctx)
	for _, comp := range components(hl.project, bl.project) {
		g := Group{Services: comp, Why: "identical"}
		var whys []string
		byPath := map[string]bool{}
		for _, name := range comp {
			why, paths, err := serviceDifference(hl, bl, name, cache)
			if err != nil {
				return nil, err
			}
			if why != "" {
				whys = append(whys, name+": "+why)
			}
			for _, p := range paths {
				byPath[p] = true
			}
		}
		for p := range byPath {
			g.ByPath = append(g.ByPath, p)
		}
		sort.Strings(g.ByPath)
		if len(whys) > 0 {
			g.Copied = true
			g.Why = whys[0]
			if len(whys) > 1 {
				g.Why += fmt.Sprintf(" (and %d more)", len(whys)-1)
			}
		}
		p.Groups = append(p.Groups, g)
	}
	for _, g := range p.Groups {
		if !g.Copied {
			continue
		}
		for _, name := range g.Services {
			s, ok := bl.project.Services[name]
			if !ok {
				continue
			}
			for _, port := range s.Ports {
				if port.Published != "" && isMovable(port.HostIP) {
					p.Moved = append(p.Moved, MovedPort{Service: name, From: port.HostIP, Port: port.Published, Protocol: protocol(port)})
				}
			}
		}
	}
	if err := p.checkHostNetwork(); err != nil {
		return nil, err
	}
	if err := p.checkCollisions(); err != nil {
		return nil, err
	}
	p.DiffTime = time.Since(start)
	return p, nil
}

// serviceDifference names how a service differs between the trees ("" when
// it does not) and the host paths outside either tree it compared by path.
func serviceDifference(hl, bl *loaded, name string, cache *contentCache) (string, []string, error) {
	_, inHead := hl.project.Services[name]
	_, inBase := bl.project.Services[name]
	switch {
	case !inBase:
		return "only in head", nil, nil
	case !inHead:
		return "only in base", nil, nil
	}
	hf, err := fingerprintOf(hl, name, cache)
	if err != nil {
		return "", nil, err
	}
	bf, err := fingerprintOf(bl, name, cache)
	if err != nil {
		return "", nil, err
	}
	return difference(hf, bf), append(hf.byPath, bf.byPath...), nil
}

// components groups the services of both trees by depends_on (implicit
// ones from links, volumes_from and network_mode included, as compose-go
// adds them): a service that needs another must run beside that one.
func components(projects ...*types.Project) [][]string {
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] != x {
			parent[x] = find(parent[x])
		}
		return parent[x]
	}
	add := func(x string) {
		if _, ok := parent[x]; !ok {
			parent[x] = x
		}
	}
	for _, p := range projects {
		for name, s := range p.Services {
			add(name)
			for dep := range s.DependsOn {
				if _, enabled := p.Services[dep]; !enabled {
					continue
				}
				add(dep)
				a, b := find(name), find(dep)
				if a != b {
					parent[a] = b
				}
			}
		}
	}
	byRoot := map[string][]string{}
	for x := range parent {
		r := find(x)
		byRoot[r] = append(byRoot[r], x)
	}
	out := make([][]string, 0, len(byRoot))
	for _, c := range byRoot {
		sort.Strings(c)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func isMovable(host string) bool { return host == "127.0.0.1" || host == "localhost" }

func protocol(p types.ServicePortConfig) string {
	if p.Protocol == "" {
		return "tcp"
	}
	return p.Protocol
}

// checkBasePorts refuses a base that publishes where the two arms could
// not be told apart, or beyond loopback.
func checkBasePorts(bl *loaded) error {
	for _, name := range bl.names() {
		for _, port := range bl.project.Services[name].Ports {
			if port.Published == "" {
				continue // "5432": nothing published on the host
			}
			switch port.HostIP {
			case "127.0.0.1", "localhost", BaseHost:
				continue
			}
			host := port.HostIP
			if host == "" {
				host = "all interfaces (no host address given)"
			}
			where := strings.Join(bl.tree.Files, ", ")
			if f, line := serviceLine(bl.files(), name, "ports", portEntry(port.Published)); f != "" {
				where = fmt.Sprintf("%s:%d", relTo(bl.dir, f), line)
			}
			return exit.Refusef("%s: the base tree's service %q publishes port %s on %s: publish on loopback instead, e.g. ports: [\"127.0.0.1:%s:%d\"]; nothing was started",
				where, name, port.Published, host, port.Published, port.Target)
		}
	}
	return nil
}

// checkCollisions refuses a plan whose head and base copy would bind the
// same address and port: docker would fail half-way through the start.
func (p *Plan) checkCollisions() error {
	type bind struct{ host, proto string }
	taken := map[int][]bind{}
	owner := map[string]string{}
	addr := func(host string) string {
		if host == "localhost" {
			return "127.0.0.1"
		}
		if host == "" || host == "::" {
			return "0.0.0.0"
		}
		return host
	}
	claim := func(arm string, src *loaded, svc, host, published, proto string) error {
		lo, hi, ok := portRange(published)
		if !ok {
			return nil
		}
		for port := lo; port <= hi; port++ {
			for _, b := range taken[port] {
				if b.proto == proto && (b.host == host || b.host == "0.0.0.0" || host == "0.0.0.0") {
					// The later claim's port line: the one to change.
					where := ""
					if f, line := serviceLine(src.files(), svc, "ports", portEntry(published)); f != "" {
						where = fmt.Sprintf("%s:%d: ", relTo(src.dir, f), line)
					}
					return exit.Refusef("%s%s service %q and %s both publish %s/%d on %s: give one of them another port in its compose file",
						where, arm, svc, owner[fmt.Sprintf("%s/%d/%s", b.host, port, proto)], proto, port, host)
				}
			}
			taken[port] = append(taken[port], bind{host, proto})
			owner[fmt.Sprintf("%s/%d/%s", host, port, proto)] = arm + " service " + fmt.Sprintf("%q", svc)
		}
		return nil
	}
	for _, name := range p.head.names() {
		for _, port := range p.head.project.Services[name].Ports {
			if port.Published == "" {
				continue
			}
			if err := claim("head", p.head, name, addr(port.HostIP), port.Published, protocol(port)); err != nil {
				return err
			}
		}
	}
	for _, g := range p.Groups {
		if !g.Copied {
			continue
		}
		for _, name := range g.Services {
			s, ok := p.base.project.Services[name]
			if !ok {
				continue
			}
			for _, port := range s.Ports {
				if port.Published == "" {
					continue
				}
				host := addr(port.HostIP)
				if isMovable(port.HostIP) {
					host = BaseHost
				}
				if err := claim("base", p.base, name, host, port.Published, protocol(port)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkHostNetwork refuses a base copy of a service on the host's network
// (network_mode: host) that the head runs too. It publishes nothing that
// could move to 127.0.0.2: it would listen on the same host ports as the
// head's copy, so its start fails half-way, or the base arm reaches the
// head's copy. Shared, it runs once and is fine; run by the base alone, it
// has the host's ports to itself.
func (p *Plan) checkHostNetwork() error {
	for _, g := range p.Groups {
		if !g.Copied {
			continue
		}
		for _, name := range g.Services {
			s, ok := p.base.project.Services[name]
			if _, inHead := p.head.project.Services[name]; !ok || !inHead || s.NetworkMode != "host" {
				continue
			}
			where := strings.Join(p.base.tree.Files, ", ")
			if f, line := serviceLine(p.base.files(), name, "network_mode"); f != "" {
				where = fmt.Sprintf("%s:%d", relTo(p.base.dir, f), line)
			}
			return exit.Refusef("%s: the base tree's service %q has network_mode: host, and the base gets its own copy of its group (%s): that copy would listen on the same host ports as the head's copy, and a service on the host's network cannot be moved to %s: drop network_mode: host and publish its ports on loopback instead, e.g. ports: [\"127.0.0.1:PORT:PORT\"]; nothing was started",
				where, name, g.Why, BaseHost)
		}
	}
	return nil
}

// portRange parses "8080" or "9000-9005".
func portRange(s string) (int, int, bool) {
	lo, hi, isRange := strings.Cut(s, "-")
	var a, b int
	if _, err := fmt.Sscanf(lo, "%d", &a); err != nil {
		return 0, 0, false
	}
	b = a
	if isRange {
		if _, err := fmt.Sscanf(hi, "%d", &b); err != nil || b < a {
			return 0, 0, false
		}
	}
	return a, b, true
}

// Copied reports whether the base runs its own copy of any group.
func (p *Plan) Copied() bool {
	for _, g := range p.Groups {
		if g.Copied {
			return true
		}
	}
	return false
}
