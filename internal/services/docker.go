package services

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// docker runs the docker CLI and returns its standard output.
func docker(ctx context.Context, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", args...)
	cmd.Stdout = &out
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// leftovers lists what carries the run's label: containers, networks,
// volumes (as "kind id" lines, in that order). The three listings run side
// by side: a teardown sweeps at least three times, and one docker CLI
// call takes 100-300 ms on a busy 2-core machine, time a canceled run
// takes from the runner's 7.5 s.
func leftovers(ctx context.Context, runID string) ([]string, error) {
	filter := "label=" + RunLabel + "=" + runID
	kinds := [][]string{
		{"container", "ps", "-a", "-q", "--filter", filter},
		{"network", "network", "ls", "-q", "--filter", filter},
		{"volume", "volume", "ls", "-q", "--filter", filter},
	}
	ids := make([]string, len(kinds))
	errs := make([]error, len(kinds))
	var wg sync.WaitGroup
	for i, kind := range kinds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = docker(ctx, kind[1:]...)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []string
	for i, kind := range kinds {
		for _, id := range strings.Fields(ids[i]) {
			out = append(out, kind[0]+" "+id)
		}
	}
	return out, nil
}

// Leftovers reports what of a run is still there, by its label.
func Leftovers(ctx context.Context, runID string) ([]string, error) {
	return leftovers(ctx, runID)
}

// DownByLabel removes every container, network and volume labelled with the
// run's id and verifies that none remains. It needs no compose file, so it
// cleans up after a process that died without its own teardown.
func DownByLabel(ctx context.Context, runID string) error {
	if runID == "" {
		return errors.New("removing a run's services: no run id given")
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), teardownTimeout)
	defer cancel()
	var last []string
	// A container being created while we look appears a moment later:
	// sweep until two looks in a row find nothing.
	clean := 0
	for attempt := 0; attempt < 20 && clean < 2; attempt++ {
		left, err := leftovers(dctx, runID)
		if err != nil {
			return fmt.Errorf("listing run %s's leftovers: %w", runID, err)
		}
		last = left
		if len(left) == 0 {
			clean++
			time.Sleep(200 * time.Millisecond)
			continue
		}
		clean = 0
		byKind := map[string][]string{}
		for _, l := range left {
			kind, id, _ := strings.Cut(l, " ")
			byKind[kind] = append(byKind[kind], id)
		}
		// Containers first: networks and volumes in use cannot go.
		if ids := byKind["container"]; len(ids) > 0 {
			_, _ = docker(dctx, append([]string{"rm", "-f", "-v"}, ids...)...)
		}
		// Networks and volumes side by side: a cancelled run's teardown
		// has seconds, and each docker call takes up to 0.7 s on a busy
		// 2-core runner.
		var wg sync.WaitGroup
		for _, rm := range [][]string{{"network", "rm"}, {"volume", "rm", "-f"}} {
			if ids := byKind[rm[0]]; len(ids) > 0 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, _ = docker(dctx, append(rm, ids...)...)
				}()
			}
		}
		wg.Wait()
		// The removals above are done when their calls return; what the
		// two clean looks below guard against is a creation still under
		// way, which the 200 ms between them gives time to show.
		time.Sleep(100 * time.Millisecond)
	}
	if clean < 2 {
		return fmt.Errorf("run %s: still there after teardown (label %s=%s): %s; remove them with docker rm -f / docker network rm / docker volume rm",
			runID, RunLabel, runID, strings.Join(last, ", "))
	}
	return nil
}
