package armdb

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A server program's goroutine must not end locked to its thread: Linux
// fires a child's death signal when the thread that forked it exits, and
// the Go runtime ends a thread when a goroutine exits locked to it. A
// goroutine of startProc could lock a thread that had forked an arm
// earlier (the runtime reuses its threads), and when its initdb ended, the
// arm got SIGKILL: two of the suite's measured controls gates lost an arm
// mid-pair ("signal: killed") while a gate beside them in the same test
// binary made its store. Here a child with a death signal is forked from
// this goroutine's thread, the thread is handed back to the runtime, and
// short programs run through startProc until many of them have ended: the
// child must still run.
func TestStartProcKeepsOtherChildrenAlive(t *testing.T) {
	runtime.LockOSThread()
	child := exec.Command("sleep", "60")
	child.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := child.Start(); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	runtime.UnlockOSThread()
	var werr error
	exited := make(chan struct{})
	go func() { werr = child.Wait(); close(exited) }()
	t.Cleanup(func() { _ = child.Process.Kill(); <-exited })

	for i := 0; i < 200; i++ {
		p, err := startProc(exec.Command("true"))
		if err != nil {
			t.Fatal(err)
		}
		<-p.done
		select {
		case <-exited:
			t.Fatalf("the child forked before ended after %d programs through startProc: %v", i+1, werr)
		default:
		}
	}
	// A death signal is delivered when the thread ends, not later: a last
	// look after a moment.
	select {
	case <-exited:
		t.Fatalf("the child forked before ended: %v", werr)
	case <-time.After(100 * time.Millisecond):
	}
}
