package host

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Container is what perfgate needs to know of a docker container: the
// image it runs, its network, and where each of its mounts comes from on
// the host.
type Container struct {
	ID          string
	Image       string // the image's ID, so a sibling runs the very same image
	NetworkMode string // "host", "bridge", "github_network_<id>", ...
	Mounts      []Mount
}

// Mount is one mount of a container.
type Mount struct {
	Type        string // "bind" or "volume"
	Name        string // the volume's name
	Source      string // the host path of a bind mount
	Destination string // the path inside the container
	RW          bool
}

// containerIDRe finds the container's own files in a mountinfo line: the
// engine bind-mounts /etc/hostname, /etc/hosts and /etc/resolv.conf from
// /var/lib/docker/containers/<id>/.
var containerIDRe = regexp.MustCompile(`/containers/([0-9a-f]{64})/(?:hostname|hosts|resolv\.conf)\s`)

// SelfContainerID is the ID of the docker container this process runs in,
// or "" when it runs on a host.
func SelfContainerID() string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	return ParseContainerID(f)
}

// ParseContainerID reads a container ID from a /proc/self/mountinfo text.
func ParseContainerID(mountinfo io.Reader) string {
	sc := bufio.NewScanner(mountinfo)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if m := containerIDRe.FindStringSubmatch(sc.Text() + " "); m != nil {
			return m[1]
		}
	}
	return ""
}

// Inspect reads a container through the docker CLI (the socket the runner
// mounts into a container action).
func Inspect(ctx context.Context, id string) (*Container, error) {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", "container", "inspect", id)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("inspecting container %s through the docker socket: %w: %s", short(id), err, strings.TrimSpace(stderr.String()))
	}
	return parseInspect(out)
}

func parseInspect(out []byte) (*Container, error) {
	var got []struct {
		ID         string `json:"Id"`
		Image      string `json:"Image"`
		HostConfig struct {
			NetworkMode string `json:"NetworkMode"`
		} `json:"HostConfig"`
		Mounts []Mount `json:"Mounts"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		return nil, fmt.Errorf("reading docker inspect's answer: %w", err)
	}
	if len(got) != 1 {
		return nil, fmt.Errorf("docker inspect named %d containers, want 1", len(got))
	}
	c := got[0]
	return &Container{ID: c.ID, Image: c.Image, NetworkMode: c.HostConfig.NetworkMode, Mounts: c.Mounts}, nil
}

// HostPath maps a path inside the container to the same file's host path
// through the container's bind mounts (the deepest mount wins); ok is
// false when no bind mount holds it.
func (c *Container) HostPath(p string) (string, bool) {
	p = filepath.Clean(p)
	best, bestLen := "", -1
	for _, m := range c.Mounts {
		if m.Type != "bind" || m.Source == "" {
			continue
		}
		d := filepath.Clean(m.Destination)
		if (p == d || strings.HasPrefix(p, d+"/") || d == "/") && len(d) > bestLen {
			rest := strings.TrimPrefix(p, d)
			best, bestLen = filepath.Join(m.Source, rest), len(d)
		}
	}
	return best, bestLen >= 0
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
