package arms

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// cookieVar is set in each arm's environment to a value of its own. A
// daemon (`setsid sh -c "cmd &"`) leaves the arm's tree and process group
// before any sample can see it, re-parented to init, but it inherits the
// environment: Stop finds it by the cookie, as Jenkins' process tree killer
// finds a build's daemons by its BUILD_ID.
const cookieVar = "PERFGATE_ARM_ID"

func newCookie(name string) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b) // never fails (crypto/rand); a zero cookie still marks the arm
	return cookieVar + "=" + sanitize(name) + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b)
}

// remember adds the current tree to every member ever seen, and forgets
// those no longer running, which need no signal (a pid seen again with
// another start time is another process). Called with a.mu held.
func (a *Process) remember(all []procStat, cur map[procKey]procStat) {
	for k, p := range cur {
		a.ever[k] = p
	}
	live := make(map[procKey]bool, len(all))
	for _, p := range all {
		if p.alive() {
			live[p.key()] = true
		}
	}
	for k := range a.ever {
		if !live[k] {
			delete(a.ever, k)
		}
	}
}

// members is what Stop signals: every process ever seen in the tree and
// still running, and every process carrying the arm's cookie.
func (a *Process) members() []procKey {
	set := map[procKey]bool{}
	a.mu.Lock()
	for k := range a.seen {
		set[k] = true
	}
	for k := range a.ever {
		set[k] = true
	}
	a.mu.Unlock()
	for _, k := range carriers(a.cookie) {
		set[k] = true
	}
	out := make([]procKey, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	return out
}

// carriers lists the running processes whose environment holds cookie.
// /proc/<pid>/environ is readable for our own processes (all of them as
// root); a process that rewrote its environment is found only if a sample
// saw it in the tree.
func carriers(cookie string) []procKey {
	all, err := allProcs()
	if err != nil || cookie == "" {
		return nil
	}
	needle := []byte(cookie + "\x00")
	var out []procKey
	for _, p := range all {
		if !p.alive() {
			continue
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/environ")
		if err != nil {
			continue
		}
		if bytes.HasPrefix(env, needle) || bytes.Contains(env, append([]byte{0}, needle...)) {
			out = append(out, p.key())
		}
	}
	return out
}

// Stop ends the arm: SIGTERM to its process group and to every process
// ever seen in its tree or carrying its cookie (a descendant that left the
// group, or daemonised out of the tree), SIGKILL to all of them once Grace
// has passed with any still running; it waits for the root to be reaped and
// the sampler to end. Safe to call more than once and from several
// goroutines.
func (a *Process) Stop() error {
	a.stopOnce.Do(a.stop)
	<-a.watch
	return a.stopErr
}

func (a *Process) stop() {
	defer close(a.stopped)
	a.mu.Lock()
	a.stopping = true
	a.snapshot() // last CPU and memory figures, and the members to signal
	a.mu.Unlock()
	members := a.members()

	a.signalAll(members, syscall.SIGTERM)
	grace := a.spec.Grace
	if a.ctx.Err() != nil {
		grace = min(grace, CanceledGrace) // the run was canceled: perfgate must end soon
	}
	deadline := time.Now().Add(grace)
	for a.anyAlive(members) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	// Looked for again, whatever the grace showed: a member may have
	// forked a daemon meanwhile, and a daemon caught in the middle of an
	// exec shows an empty environment (the kernel sets the new program's
	// environment bounds only after it has switched to its memory), so
	// the first look can miss its cookie. That missed a daemon once in a
	// rehearsal under the race detector (TestStopKillsDaemons, issue 19's
	// run 109); such a late find gets SIGKILL at once.
	if again := a.members(); a.anyAlive(again) {
		members = again
		fmt.Fprintf(a.log, "\nperfgate: arm %s still running %s after SIGTERM; sending SIGKILL\n", a.spec.Name, grace)
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
func (a *Process) signalAll(members []procKey, sig syscall.Signal) {
	if a.groupIsOurs() {
		_ = syscall.Kill(-a.pgid, sig)
	}
	for _, k := range members {
		if p, ok := readStat(k.pid); ok && p.start == k.start && p.pgrp != a.pgid {
			signalKeyed(k, sig)
		}
	}
}

// anyAlive reports whether a member of the group or of the last-seen tree
// is still running. Zombies count as ended: they run nothing, and the
// orphaned ones are reaped by init, not by us.
func (a *Process) anyAlive(members []procKey) bool {
	for _, k := range members {
		if p, ok := readStat(k.pid); ok && p.start == k.start && p.alive() {
			return true
		}
	}
	if !a.groupIsOurs() {
		return false
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
