package arms

import (
	"io"
	"os"
	"time"

	"github.com/perfgate/perfgate/internal/redact"
)

// drainWait bounds how long the log's copier keeps reading after the arm
// was stopped or exited: a descendant that escaped the arm's tree may hold
// the pipe open forever, and its output no longer belongs to the run.
const drainWait = time.Second

// logPipe carries an arm's stdout and stderr through the redactor into its
// log file. The arm's processes hold the write end; one goroutine copies.
type logPipe struct {
	r, w *os.File
	out  *redact.Writer
	done chan struct{}
}

func newLogPipe(set *redact.Set, log *os.File) (*logPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	return &logPipe{r: r, w: w, out: set.NewWriter(log), done: make(chan struct{})}, nil
}

// abandon closes both ends when the arm never started.
func (p *logPipe) abandon() {
	p.r.Close()
	p.w.Close()
	close(p.done)
}

// copy runs until every writer has closed the pipe, or until drainWait
// after quit is closed; it then writes what the redactor held back.
func (p *logPipe) copy(quit <-chan struct{}) {
	defer close(p.done)
	p.w.Close() // the parent's copy: only the arm's tree writes now
	stop := make(chan struct{})
	go func() {
		select {
		case <-quit:
			// Reads then end by EOF (everyone closed) or by the deadline.
			_ = p.r.SetReadDeadline(time.Now().Add(drainWait))
		case <-stop:
		}
	}()
	// The copy ends by EOF, by the deadline, or when the log cannot take
	// more (a full disk): in each case the rest of the output is dropped,
	// never written unredacted.
	_, _ = io.Copy(p.out, p.r)
	close(stop)
	_ = p.out.Close()
	p.r.Close()
}
