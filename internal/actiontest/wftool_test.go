package actiontest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/perfgate/perfgate/internal/testbin"
)

// wftool is built from its own module in testdata/wftool (actionlint
// cannot build in the main module: see its go.mod), once per checkout
// while it is current (internal/testbin), and looked up once per test
// process.
var wftoolBin struct {
	once sync.Once
	path string
	err  string
}

func wftool(t *testing.T) string {
	t.Helper()
	wftoolBin.once.Do(func() {
		dir, err := filepath.Abs(filepath.Join("testdata", "wftool"))
		if err != nil {
			wftoolBin.err = err.Error()
			return
		}
		wftoolBin.path, err = testbin.BuildModule(context.Background(), dir, "wftool", shared)
		if err != nil {
			wftoolBin.err = err.Error()
		}
	})
	if wftoolBin.err != "" {
		t.Fatalf("building testdata/wftool: %s", wftoolBin.err)
	}
	return wftoolBin.path
}

// workflow is what `wftool jobs` reads of a workflow file.
type workflow struct {
	Env         map[string]string `json:"env"`
	Concurrency *struct {
		Group            string `json:"group"`
		CancelInProgress string `json:"cancel_in_progress"`
	} `json:"concurrency"`
	Jobs []wfJob `json:"jobs"`
}

type wfJob struct {
	ID      string            `json:"id"`
	Needs   []string          `json:"needs"`
	If      string            `json:"if"`
	Env     map[string]string `json:"env"`
	Outputs map[string]string `json:"outputs"`
	Steps   []wfStep          `json:"steps"`
	Uses    string            `json:"uses"`
	With    map[string]string `json:"with"`
}

type wfStep struct {
	ID              string            `json:"id"`
	Name            string            `json:"name"`
	If              string            `json:"if"`
	Uses            string            `json:"uses"`
	With            map[string]string `json:"with"`
	Run             string            `json:"run"`
	Env             map[string]string `json:"env"`
	ContinueOnError bool              `json:"continue_on_error"`
}

func readWorkflow(t *testing.T, path string) *workflow {
	t.Helper()
	out, err := exec.Command(wftool(t), "jobs", path).Output()
	if err != nil {
		t.Fatalf("wftool jobs %s: %v", path, err)
	}
	var w workflow
	if err := json.Unmarshal(out, &w); err != nil {
		t.Fatalf("reading wftool's jobs: %v", err)
	}
	return &w
}

// evaluator talks to one `wftool eval` process.
type evaluator struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
}

type evalRequest struct {
	Mode      string         `json:"mode"`
	Src       string         `json:"src"`
	Ctx       map[string]any `json:"ctx"`
	Cancelled bool           `json:"cancelled"`
	Success   bool           `json:"success"`
	Failure   bool           `json:"failure"`
}

type evalAnswer struct {
	Value string `json:"value"`
	Bool  bool   `json:"bool"`
	Error string `json:"error"`
}

func newEvaluator(t *testing.T) *evaluator {
	t.Helper()
	cmd := exec.Command(wftool(t), "eval")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	return &evaluator{t: t, in: in, out: sc}
}

func (e *evaluator) ask(r evalRequest) evalAnswer {
	e.t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.in.Write(append(b, '\n')); err != nil {
		e.t.Fatalf("asking wftool: %v", err)
	}
	if !e.out.Scan() {
		e.t.Fatalf("wftool eval gave no answer: %v", e.out.Err())
	}
	var a evalAnswer
	if err := json.Unmarshal(e.out.Bytes(), &a); err != nil {
		e.t.Fatal(err)
	}
	if a.Error != "" {
		e.t.Fatalf("evaluating %q: %s", r.Src, a.Error)
	}
	return a
}

func TestWftoolEvaluator(t *testing.T) {
	e := newEvaluator(t)
	ctx := map[string]any{"needs": map[string]any{"attempt-1": map[string]any{"result": "cancelled", "outputs": map[string]any{}}}}
	tests := []struct {
		mode, src, want string
	}{
		{"interpolate", "${{ needs.attempt-1.outputs.exit-code == '' }}", "true"},
		{"interpolate", "${{ needs.attempt-1.result == 'CANCELLED' }}", "true"},
		{"interpolate", "${{ needs.attempt-1.result != 'skipped' && 'yes' || 'no' }}", "yes"},
		{"interpolate", "a ${{ format('--attempt {0} --x {1}', 2, 'y') }} b", "a --attempt 2 --x y b"},
		{"interpolate", "${{ '2' == 2 }}", "true"},
		{"interpolate", "${{ null == '' }}", "true"},
		{"if", "${{ !cancelled() && needs.attempt-1.outputs.next == 'retry' }}", "false"},
		// An if without a status function also needs success().
		{"if", "needs.attempt-1.result == 'cancelled'", "false"},
		{"if", "", "false"},
	}
	for _, tc := range tests {
		if got := e.ask(evalRequest{Mode: tc.mode, Src: tc.src, Ctx: ctx}).Value; got != tc.want {
			t.Errorf("%s %q = %q, want %q", tc.mode, tc.src, got, tc.want)
		}
	}
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}
