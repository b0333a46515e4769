package arms

import (
	"fmt"
	"syscall"
	"time"
)

// Stop ends the arm: SIGTERM to its process group (and to any descendant
// that left the group), SIGKILL to all of them once Grace has passed with any
// still running; it waits for the root to be reaped and the sampler to end.
// Safe to call more than once and from several goroutines.
func (a *Arm) Stop() error {
	a.stopOnce.Do(a.stop)
	<-a.watch
	return a.stopErr
}

func (a *Arm) stop() {
	defer close(a.stopped)
	a.mu.Lock()
	a.stopping = true
	a.snapshot() // last CPU and memory figures, and the members to signal
	members := make([]procKey, 0, len(a.seen))
	for k := range a.seen {
		members = append(members, k)
	}
	a.mu.Unlock()

	a.signalAll(members, syscall.SIGTERM)
	deadline := time.Now().Add(a.spec.Grace)
	for a.anyAlive(members) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if a.anyAlive(members) {
		fmt.Fprintf(a.log, "\nperfgate: arm %s still running %s after SIGTERM; sending SIGKILL\n", a.spec.Name, a.spec.Grace)
		a.signalAll(members, syscall.SIGKILL)
		// SIGKILL cannot be ignored; this bounds only a process stuck in
		// uninterruptible sleep.
		for end := time.Now().Add(5 * time.Second); a.anyAlive(members) && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
	}
	<-a.exited
	close(a.quit)
	a.sampler.Wait()
	if a.anyAlive(members) {
		a.stopErr = fmt.Errorf("stopping arm %s: processes of its group %d survived SIGKILL", a.spec.Name, a.pgid)
	}
	if err := a.log.Close(); err != nil && a.stopErr == nil {
		a.stopErr = fmt.Errorf("closing the log of arm %s: %w", a.spec.Name, err)
	}
}

// signalAll signals the process group, then each member that is outside it
// (a descendant that called setsid or setpgid).
func (a *Arm) signalAll(members []procKey, sig syscall.Signal) {
	_ = syscall.Kill(-a.pgid, sig)
	for _, k := range members {
		if p, ok := readStat(k.pid); ok && p.start == k.start && p.pgrp != a.pgid {
			signalKeyed(k, sig)
		}
	}
}

// anyAlive reports whether a member of the group or of the last-seen tree
// is still running. Zombies count as ended: they run nothing, and the
// orphaned ones are reaped by init, not by us.
func (a *Arm) anyAlive(members []procKey) bool {
	for _, k := range members {
		if p, ok := readStat(k.pid); ok && p.start == k.start && p.alive() {
			return true
		}
	}
	all, err := allProcs()
	if err != nil {
		return false
	}
	for _, p := range all {
		if p.pgrp == a.pgid && p.alive() {
			return true
		}
	}
	return false
}
