package services

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

type inspected struct {
	ID     string
	Name   string
	Config struct {
		Labels map[string]string
	}
	State struct {
		Status   string
		ExitCode int
		Health   *struct {
			Status string
			Log    []struct {
				ExitCode int
				Output   string
			}
		}
	}
	NetworkSettings struct {
		Ports map[string][]binding
	}
	// HostConfig.PortBindings are the ports the container publishes even
	// once it has stopped (NetworkSettings.Ports is then empty).
	HostConfig struct {
		PortBindings map[string][]binding
	}
}

type binding struct {
	HostIP   string `json:"HostIp"`
	HostPort string
}

func (c inspected) label() string {
	return c.Config.Labels["com.docker.compose.project"] + "/" + c.Config.Labels["com.docker.compose.service"]
}

// logPath is where saveLogs keeps the container's output.
func (c inspected) logPath(logDir string) string {
	l := c.Config.Labels
	return filepath.Join(logDir, l["com.docker.compose.project"], l["com.docker.compose.service"]+"-"+l["com.docker.compose.container-number"]+".log")
}

// waitHealthy polls the run's containers until each is healthy: by its
// health check when it has one (docker-compose 1.29 has no --wait), else
// by its published ports answering.
func waitHealthy(ctx context.Context, runID, logDir string, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = 3 * time.Minute
	}
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		waiting, err := notReady(ctx, runID, logDir)
		if err != nil {
			return err
		}
		if len(waiting) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("services not healthy after %s: %s", timeout, strings.Join(waiting, "; "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for services to be healthy: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

var errFailed = errors.New("service failed")

// notReady lists the containers still starting, or fails on one that died.
func notReady(ctx context.Context, runID, logDir string) ([]string, error) {
	ids, err := docker(ctx, "ps", "-a", "-q", "--filter", "label="+RunLabel+"="+runID)
	if err != nil {
		return nil, fmt.Errorf("listing the run's containers: %w", err)
	}
	if len(strings.Fields(ids)) == 0 {
		return nil, fmt.Errorf("listing the run's containers: none carries label %s=%s", RunLabel, runID)
	}
	out, err := docker(ctx, append([]string{"inspect"}, strings.Fields(ids)...)...)
	if err != nil {
		return nil, fmt.Errorf("inspecting the run's containers: %w", err)
	}
	var cs []inspected
	if err := json.Unmarshal([]byte(out), &cs); err != nil {
		return nil, fmt.Errorf("reading docker inspect: %w", err)
	}
	var waiting []string
	for _, c := range cs {
		name := c.label()
		switch c.State.Status {
		case "exited", "dead":
			if err := stopped(c, logDir); err != nil {
				return nil, err
			}
			continue
		case "running":
		default:
			waiting = append(waiting, name+" "+c.State.Status)
			continue
		}
		if h := c.State.Health; h != nil {
			switch h.Status {
			case "healthy":
				continue
			case "unhealthy":
				last := ""
				if n := len(h.Log); n > 0 {
					last = strings.TrimSpace(h.Log[n-1].Output)
				}
				return nil, fmt.Errorf("%w: %s is unhealthy: %s", errFailed, name, last)
			}
			waiting = append(waiting, name+" health "+h.Status)
			continue
		}
		for _, addr := range published(c) {
			if !answers(ctx, addr) {
				waiting = append(waiting, name+" port "+addr)
			}
		}
	}
	sort.Strings(waiting)
	return waiting, nil
}

// stopped judges a container that is no longer running: a one-shot job
// (a loader) that exited 0 is done, whether or not its image carries a
// health check (a loader is often run from its server's image); any other
// exit fails the start. A service that publishes a port is a server the
// arms connect to, so its exit 0 fails the start too, saying why.
func stopped(c inspected, logDir string) error {
	name := c.label()
	// Down keeps each container's log there (saveLogs).
	log := c.logPath(logDir)
	if c.State.Status == "dead" {
		return fmt.Errorf("%w: %s is dead in docker (exit code %d, its log: %s)", errFailed, name, c.State.ExitCode, log)
	}
	if c.State.ExitCode != 0 {
		return fmt.Errorf("%w: %s exited with code %d (its log: %s)", errFailed, name, c.State.ExitCode, log)
	}
	if ports := bound(c.HostConfig.PortBindings); len(ports) > 0 {
		return fmt.Errorf("%w: %s exited with code 0 but publishes %s: a service that publishes a port is a server the arms connect to, and it has stopped (its log: %s); a one-shot job publishes no port: remove its ports from the compose file",
			errFailed, name, strings.Join(ports, ", "), log)
	}
	return nil
}

// bound lists the host side of port bindings ("127.0.0.1:8080/tcp").
func bound(ports map[string][]binding) []string {
	var out []string
	for port, binds := range ports {
		_, proto, _ := strings.Cut(port, "/")
		for _, b := range binds {
			host := b.HostIP
			if host == "" {
				host = "0.0.0.0"
			}
			out = append(out, net.JoinHostPort(host, b.HostPort)+"/"+proto)
		}
	}
	sort.Strings(out)
	return out
}

// published lists the container's published TCP addresses.
func published(c inspected) []string {
	var out []string
	for port, binds := range c.NetworkSettings.Ports {
		if !strings.HasSuffix(port, "/tcp") {
			continue
		}
		for _, b := range binds {
			host := b.HostIP
			if host == "" || host == "0.0.0.0" {
				host = "127.0.0.1"
			}
			if host == "::" {
				continue // the IPv4 binding beside it is checked
			}
			out = append(out, net.JoinHostPort(host, b.HostPort))
		}
	}
	sort.Strings(out)
	return out
}

// answers: docker's proxy accepts a connection even when nothing listens in
// the container, then closes it. A server that is up either waits for the
// client to speak (the read times out) or greets it; a closed connection
// means not yet.
func answers(ctx context.Context, addr string) bool {
	d := net.Dialer{Timeout: time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	defer conn.Close()
	_ = conn.SetReadDeadline(time.Now().Add(150 * time.Millisecond))
	buf := make([]byte, 1)
	_, err = conn.Read(buf)
	if err == nil {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
