package armdb

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerFile, in a runtime folder (and in a folder Start made itself), names
// the process the server belongs to (Options.Owner).
const ownerFile = "owner"

// Prefixes of the folders Start makes: a runtime folder (data dir, socket,
// server key) and, when Options.Dir is empty, the store's own folder.
const (
	runtimePrefix = "perfgate-pg-"
	ownDirPrefix  = "perfgate-store-"
)

// RemoveStale removes the folders that servers of killed runs left: the
// runtime folders (data dir, socket, the server's private key) under dir and
// under the system's temp folder, and folders Start made for itself there,
// whose owner file names a process gone reports as ended. A folder without
// an owner file, one whose owner runs, and one whose postmaster still runs
// are left alone. It returns the folders removed.
//
// A killed run cannot clean up after itself: its server dies with it (a
// death signal), but the folders stay, 40 MB and a private key each.
func RemoveStale(dir string, gone func(owner string) bool) ([]string, error) {
	var roots []string
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("resolving the store's folder %s: %w", dir, err)
		}
		roots = append(roots, abs)
	}
	roots = append(roots, os.TempDir())
	var removed []string
	var errs []error
	for _, root := range roots {
		entries, err := os.ReadDir(root)
		if err != nil {
			continue // no folder yet: nothing stale in it
		}
		for _, e := range entries {
			name := e.Name()
			if !e.IsDir() || !(strings.HasPrefix(name, runtimePrefix) || strings.HasPrefix(name, ownDirPrefix)) {
				continue
			}
			path := filepath.Join(root, name)
			owner, err := os.ReadFile(filepath.Join(path, ownerFile))
			if err != nil || !gone(strings.TrimSpace(string(owner))) || serverRuns(path) {
				continue
			}
			if err := os.RemoveAll(path); err != nil {
				errs = append(errs, fmt.Errorf("removing a killed run's store folder %s: %w", path, err))
				continue
			}
			removed = append(removed, path)
		}
	}
	return removed, errors.Join(errs...)
}

// serverRuns reports whether a postmaster still runs out of folder: the
// one its own data/postmaster.pid names (a runtime folder), or one of a
// runtime folder inside it (a folder Start made itself holds its runtime
// folder when the server user can reach it). Removing such a folder would
// pull the data dir from under a live server.
func serverRuns(folder string) bool {
	if postmasterRuns(folder) {
		return true
	}
	entries, err := os.ReadDir(folder)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), runtimePrefix) && postmasterRuns(filepath.Join(folder, e.Name())) {
			return true
		}
	}
	return false
}

// postmasterRuns reports whether the postmaster named by the runtime
// folder's data/postmaster.pid still runs (its death signal may not have
// ended it yet).
func postmasterRuns(runtime string) bool {
	b, err := os.ReadFile(filepath.Join(runtime, "data", "postmaster.pid"))
	if err != nil {
		return false
	}
	first, _, _ := bytes.Cut(b, []byte("\n"))
	pid, err := strconv.Atoi(string(bytes.TrimSpace(first)))
	if err != nil || pid <= 0 {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// A zombie runs nothing; any other state holds the data dir.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	f := bytes.Fields(rest)
	return len(f) > 0 && f[0][0] != 'Z' && exists(syscall.Kill(pid, 0))
}

// exists reads signal 0's answer: a process another user runs answers
// EPERM (a sweep not run as root, of a postmaster run as postgres), and it
// runs, so its folder must stay.
func exists(err error) bool {
	return err == nil || errors.Is(err, syscall.EPERM)
}
