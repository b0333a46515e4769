package services

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v4"
)

// Labels on every container, network and volume of a run. RunLabel lets
// teardown prove nothing is left; CheckoutLabel and OwnerLabel let a later
// run of the same checkout find what a killed one left, and whether the
// process that started it is gone.
const (
	RunLabel      = "perfgate.run"
	CheckoutLabel = "perfgate.checkout"
	OwnerLabel    = "perfgate.owner"
)

// composeTool is the compose CLI of this machine: the v2 plugin when docker
// has it, else the standalone docker-compose (Debian's is the Python 1.29).
type composeTool struct {
	argv []string
}

var (
	toolOnce sync.Once
	tool     composeTool
	toolErr  error
)

func findCompose(ctx context.Context) (composeTool, error) {
	toolOnce.Do(func() {
		if _, err := exec.LookPath("docker"); err != nil {
			toolErr = fmt.Errorf("finding the docker CLI: %w: install docker (the engine and its CLI)", err)
			return
		}
		if exec.CommandContext(ctx, "docker", "compose", "version").Run() == nil {
			tool = composeTool{argv: []string{"docker", "compose"}}
			return
		}
		if path, err := exec.LookPath("docker-compose"); err == nil {
			tool = composeTool{argv: []string{path}}
			return
		}
		toolErr = errors.New("neither `docker compose` nor `docker-compose` runs here: install the docker compose plugin (or the docker-compose package)")
	})
	return tool, toolErr
}

func (t composeTool) String() string { return strings.Join(t.argv, " ") }

// command builds `<compose> -p project -f file args...`.
func (t composeTool) command(ctx context.Context, project, file string, args ...string) *exec.Cmd {
	argv := append(append([]string{}, t.argv[1:]...), "-p", project, "-f", file)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, t.argv[0], argv...)
	// Compose given SIGINT stops what it was doing cleanly; a kill would
	// leave half-created containers (teardown removes them either way).
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10e9
	// The resolved file is complete: the tool must not read the caller's
	// .env or COMPOSE_* settings on top of it.
	cmd.Dir = filepath.Dir(file)
	cmd.Env = cleanEnv(os.Environ())
	return cmd
}

func cleanEnv(env []string) []string {
	out := env[:0:0]
	for _, e := range env {
		if strings.HasPrefix(e, "COMPOSE_") {
			continue
		}
		out = append(out, e)
	}
	return out
}

// headProject is the head's whole project, shared groups included, named
// name (the head's project and the run id).
func (p *Plan) headProject(name string, labels types.Labels) *types.Project {
	src := p.head.project
	out := *src
	out.Name = name
	out.Services = types.Services{}
	for svc, s := range src.Services {
		out.Services[svc] = labelled(s, labels)
	}
	out.Networks, out.Volumes = labelResources(src, labels, name, runSuffix(labels))
	return &out
}

// baseProject holds the base's copy of each differing group, its published
// ports moved to 127.0.0.2 and its resources renamed so nothing is shared
// with the head's project by accident.
func (p *Plan) baseProject(name string, labels types.Labels) *types.Project {
	src := p.base.project
	out := *src
	out.Name = name
	out.Services = types.Services{}
	for _, g := range p.Groups {
		if !g.Copied {
			continue
		}
		for _, svc := range g.Services {
			s, ok := src.Services[svc]
			if !ok {
				continue
			}
			s = labelled(s, labels)
			ports := make([]types.ServicePortConfig, len(s.Ports))
			for i, port := range s.Ports {
				if port.Published != "" && isMovable(port.HostIP) {
					port.HostIP = BaseHost
				}
				ports[i] = port
			}
			// Replace, never merge: an override that only changes host_ip
			// would add a second binding beside the first.
			s.Ports = ports
			if s.ContainerName != "" {
				s.ContainerName += BaseSuffix
			}
			out.Services[svc] = s
		}
	}
	out.Networks, out.Volumes = labelResources(src, labels, name, runSuffix(labels)+BaseSuffix)
	return &out
}

// runSuffix is what a resource named in the compose file gets appended, so
// two runs at once never share a network or a volume by its name.
func runSuffix(labels types.Labels) string { return "-" + SafeName(labels[RunLabel]) }

func labelled(s types.ServiceConfig, labels types.Labels) types.ServiceConfig {
	s.Labels = withLabels(s.Labels, labels)
	// Profiles were applied when loading: the written file runs what it holds.
	s.Profiles = nil
	return s
}

// labelResources labels the project's own networks and volumes and names
// them after the project that creates them; one named in the file keeps its
// name with suffix appended.
func labelResources(src *types.Project, labels types.Labels, project, suffix string) (types.Networks, types.Volumes) {
	rename := func(key, name string) string {
		if name == "" || name == src.Name+"_"+key {
			return project + "_" + key
		}
		return name + suffix
	}
	nets := types.Networks{}
	for k, n := range src.Networks {
		if !bool(n.External) {
			n.Name = rename(k, n.Name)
			n.Labels = withLabels(n.Labels, labels)
		}
		nets[k] = n
	}
	vols := types.Volumes{}
	for k, v := range src.Volumes {
		if !bool(v.External) {
			v.Name = rename(k, v.Name)
			v.Labels = withLabels(v.Labels, labels)
		}
		vols[k] = v
	}
	return nets, vols
}

func withLabels(l, add types.Labels) types.Labels {
	out := types.Labels{}
	for k, v := range l {
		out[k] = v
	}
	for k, v := range add {
		out[k] = v
	}
	return out
}

// resolvedYAML writes the project as one resolved file that both the v2
// plugin and docker-compose 1.29 read the same way.
func resolvedYAML(p *types.Project) ([]byte, error) {
	raw, err := p.MarshalYAML()
	if err != nil {
		return nil, fmt.Errorf("writing compose project %s: %w", p.Name, err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("re-reading compose project %s: %w", p.Name, err)
	}
	fixForV1(doc)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("writing compose project %s: %w", p.Name, err)
	}
	header := fmt.Sprintf("# Written by perfgate: project %s, resolved by compose-go; run with -p %s.\n", p.Name, p.Name)
	return append([]byte(header), buf.Bytes()...), nil
}

// fixForV1 removes or rewrites what docker-compose 1.29's schema refuses in
// compose-go's output. Every field dropped here was already applied while
// resolving (env files into environment, profiles, the project name via -p).
func fixForV1(doc map[string]any) {
	delete(doc, "name")
	services, _ := doc["services"].(map[string]any)
	for _, v := range services {
		s, ok := v.(map[string]any)
		if !ok {
			continue
		}
		for _, k := range []string{"env_file", "label_file", "profiles", "pull_refresh_after", "attach", "develop", "provider", "use_api_socket", "pre_start", "post_start", "pre_stop", "models", "annotations"} {
			delete(s, k)
		}
		if deps, ok := s["depends_on"].(map[string]any); ok {
			for _, d := range deps {
				if dm, ok := d.(map[string]any); ok {
					delete(dm, "required")
					delete(dm, "restart")
				}
			}
		}
		if hc, ok := s["healthcheck"].(map[string]any); ok {
			delete(hc, "start_interval")
			// compose-go keeps an extended check beside disable: true;
			// 1.29 refuses the combination.
			if d, _ := hc["disable"].(bool); d {
				s["healthcheck"] = map[string]any{"disable": true}
			}
		}
		if vols, ok := s["volumes"].([]any); ok {
			for _, v := range vols {
				if vm, ok := v.(map[string]any); ok {
					if b, ok := vm["bind"].(map[string]any); ok {
						delete(b, "create_host_path")
						delete(b, "selinux")
						if len(b) == 0 {
							delete(vm, "bind")
						}
					}
					if b, ok := vm["volume"].(map[string]any); ok {
						delete(b, "subpath")
						if len(b) == 0 {
							delete(vm, "volume")
						}
					}
				}
			}
		}
		// 1.29 knows no host_ip in the long port syntax: write the short one.
		if ports, ok := s["ports"].([]any); ok {
			for i, v := range ports {
				if pm, ok := v.(map[string]any); ok {
					ports[i] = shortPort(pm)
				}
			}
		}
		if nets, ok := s["networks"].(map[string]any); ok {
			for k, v := range nets {
				if nm, ok := v.(map[string]any); ok {
					delete(nm, "interface_name")
					delete(nm, "gw_priority")
					delete(nm, "driver_opts")
					if len(nm) == 0 {
						nets[k] = nil
					}
				}
			}
		}
	}
	for _, key := range []string{"networks", "volumes"} {
		defs, _ := doc[key].(map[string]any)
		for _, v := range defs {
			if m, ok := v.(map[string]any); ok {
				delete(m, "enable_ipv4")
				if ipam, ok := m["ipam"].(map[string]any); ok && len(ipam) == 0 {
					delete(m, "ipam")
				}
			}
		}
	}
}

func shortPort(pm map[string]any) string {
	str := func(k string) string {
		if v, ok := pm[k]; ok && v != nil {
			return fmt.Sprint(v)
		}
		return ""
	}
	proto := str("protocol")
	if proto == "" {
		proto = "tcp"
	}
	target := str("target")
	published := str("published")
	if published == "" {
		return target + "/" + proto
	}
	host := str("host_ip")
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if host == "" {
		return published + ":" + target + "/" + proto
	}
	return host + ":" + published + ":" + target + "/" + proto
}

// serviceNames lists a project's services, sorted.
func serviceNames(p *types.Project) []string {
	names := make([]string, 0, len(p.Services))
	for n := range p.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
