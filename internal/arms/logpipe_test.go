package arms

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
)

const armSecret = "tok-7c1e55-SECRET"

// TestLogIsRedacted: an arm that prints a secret (split across two writes,
// as a buffered logger may) and dies before it is ready leaves a log, and
// a refusal quoting its tail, without the secret.
func TestLogIsRedacted(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "head.log")
	_, err := Start(context.Background(), Spec{
		Name:    "head",
		Command: []string{"sh", "-c", `printf 'Authorization: Bearer tok-7c1e'; sleep 0.2; printf '55-SECRET\nbye\n' >&2; exit 3`},
		LogPath: logPath,
		Ready:   "tcp://" + freeAddr(t),
		Redact:  redact.New(armSecret),
	})
	if err == nil {
		t.Fatal("an arm that exited before it was ready was accepted")
	}
	if strings.Contains(err.Error(), "SECRET") || !strings.Contains(err.Error(), "Bearer ***") || !strings.Contains(err.Error(), "bye") {
		t.Fatalf("the refusal's tail is not the redacted log:\n%v", err)
	}
	b, rerr := os.ReadFile(logPath)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if got := string(b); strings.Contains(got, "SECRET") || got != "Authorization: Bearer ***\nbye\n" {
		t.Fatalf("log %q", got)
	}
}

// TestLogPipeStrayWriter: a process that escaped the arm's tree and keeps
// the log's pipe open (here: a second descriptor of its write end) does
// not keep the copier, and so Stop, waiting past drainWait.
func TestLogPipeStrayWriter(t *testing.T) {
	t.Parallel()
	log, err := os.Create(filepath.Join(t.TempDir(), "arm.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	p, err := newLogPipe(redact.New(armSecret), log)
	if err != nil {
		t.Fatal(err)
	}
	stray, err := dupFile(p.w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stray.Close() })
	quit := make(chan struct{})
	go p.copy(quit)
	if _, err := stray.WriteString("stray " + armSecret[:5]); err != nil {
		t.Fatal(err)
	}
	if _, err := stray.WriteString(armSecret[5:] + "\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	began := time.Now()
	close(quit)
	select {
	case <-p.done:
	case <-time.After(drainWait + 5*time.Second):
		t.Fatal("the copier kept reading a pipe a stray holds open")
	}
	if took := time.Since(began); took < drainWait/2 {
		t.Fatalf("the copier stopped after %s, before draining for %s", took, drainWait)
	}
	b, err := os.ReadFile(log.Name())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "stray ***\n" {
		t.Fatalf("log %q", b)
	}
}

func dupFile(f *os.File) (*os.File, error) {
	fd, err := syscall.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
