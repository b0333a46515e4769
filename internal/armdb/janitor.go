package armdb

import (
	"os"
	"os/exec"
	"syscall"
	"time"
)

// janitorName is the janitor's $0, what ps shows of it.
const janitorName = "perfgate-store-janitor"

// janitorScript waits for its stdin to close, which happens when Stop ends
// it or when our process dies without Stop (SIGKILL closes every
// descriptor), then waits up to 10 s for the postmaster (killed by its own
// death signal) to exit and removes the runtime folder, $1, and any other
// folder it was given.
const janitorScript = `while read -r _; do :; done
i=0
while [ -f "$1/data/postmaster.pid" ] && [ $i -lt 100 ]; do
	read -r pid < "$1/data/postmaster.pid" || break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
	i=$((i+1))
done
rm -rf -- "$@"
`

// janitor removes a server's runtime folder (its data dir and private key,
// about 40 MB) when the process that started it is killed before Stop, so
// a killed run does not leave them until the next run's RemoveStale. It is
// a shell holding the read end of a pipe whose write end only we hold.
type janitor struct {
	w    *os.File
	done chan struct{}
}

// startJanitor starts the janitor of runtime and of the other folders
// given; nil when there is no shell to run it (RemoveStale at the next
// start then does its work).
func startJanitor(runtime string, also ...string) *janitor {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return nil
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd := exec.Command(sh, append([]string{"-c", janitorScript, janitorName, runtime}, also...)...)
	cmd.Stdin = r
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	// Its own process group and no death signal: it must outlive us, and
	// a signal meant for our group (a terminal's ^C) is not meant for it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil
	}
	r.Close()
	j := &janitor{w: w, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(j.done)
	}()
	return j
}

// end closes the janitor's pipe, so it removes what is left of the runtime
// folder (nothing, after Stop) and exits; it waits up to 15 s for that.
func (j *janitor) end() {
	if j == nil {
		return
	}
	j.w.Close()
	select {
	case <-j.done:
	case <-time.After(15 * time.Second):
	}
}
