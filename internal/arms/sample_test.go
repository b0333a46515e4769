package arms

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const mib = 1 << 20

// The machine is shared (2 cores, load average up to 8), so what a service
// gets of a core varies a lot. The tests therefore check what perfgate
// reads against the service's own getrusage (a source independent of
// /proc) within a tick-sized margin, and keep absolute bounds loose: busy
// above the gate's 2 % limit, idle far under it.
func TestCPU(t *testing.T) {
	const window = 2 * time.Second
	tests := []struct {
		name     string
		knobs    []string
		requests int           // sent one after another during the window
		min, max time.Duration // CPU used in the window
	}{
		// A quiet Go service: nothing but the runtime's timers.
		{"idle", nil, 0, 0, 40 * time.Millisecond},
		// 60 requests of 50k SHA-256 rounds (10-30 ms each on a free core).
		{"cpu work", []string{"--cpu-work", "50000"}, 60, 100 * time.Millisecond, 0},
		// A background worker burning a fifth of a core (400 ms of 2 s).
		{"idle busy", []string{"--idle-busy", "0.2"}, 0, 60 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Each reads its own process's CPU, which a neighbour on the
			// other core does not change.
			t.Parallel()
			a, url := startExample(t, tt.knobs...)
			time.Sleep(200 * time.Millisecond) // let start-up work finish
			// perfgate's reading is taken on each side of the service's
			// own, so the round trip of its HTTP answer (over 100 ms under
			// -race at load 9, in which the busy worker burns 20 ms or
			// more) falls between the two and not into the comparison.
			p0, selfBefore, p1 := a.CPU(), serviceCPU(t, url), a.CPU()
			start := time.Now()
			for range tt.requests {
				get(t, url+"/hello")
			}
			if rest := window - time.Since(start); rest > 0 {
				time.Sleep(rest)
			}
			p2, selfAfter, p3 := a.CPU(), serviceCPU(t, url), a.CPU()
			self, used := selfAfter-selfBefore, p2-p1
			t.Logf("%s: perfgate read %s to %s of CPU in %s (%.1f %% of a core); the service's getrusage says %s",
				tt.name, used, p3-p0, time.Since(start).Round(time.Millisecond), 100*used.Seconds()/time.Since(start).Seconds(), self)
			if used < tt.min || (tt.max > 0 && used > tt.max) {
				t.Fatalf("CPU used %s, want between %s and %s", used, tt.min, fmtMax(tt.max))
			}
			// Two 10 ms ticks of rounding at each end, plus 5 %.
			slack := 40*time.Millisecond + self/20
			if self < used-slack || self > p3-p0+slack {
				t.Fatalf("perfgate read %s to %s around the service's getrusage %s: outside by more than %s", used, p3-p0, self, slack)
			}
		})
	}
}

// serviceCPU asks the example service for its own CPU time.
func serviceCPU(t *testing.T, url string) time.Duration {
	t.Helper()
	resp, err := http.Get(url + "/debug/cpu")
	if err != nil {
		t.Fatalf("GET /debug/cpu: %v", err)
	}
	defer resp.Body.Close()
	var v struct {
		CPUNanos int64 `json:"cpu_ns"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("decoding /debug/cpu: %v", err)
	}
	return time.Duration(v.CPUNanos)
}

func fmtMax(d time.Duration) string {
	if d == 0 {
		return "unbounded"
	}
	return d.String()
}

// CPU counts the whole tree: a live descendant's time, and a reaped child's
// time that only its parent's cutime/cstime still holds. The descendant is
// this test binary burning exactly 300 ms of CPU.
func TestCPUCountsDescendants(t *testing.T) {
	const burn = 300 * time.Millisecond
	tests := []struct {
		name   string
		script string
		env    []string
		done   string
		burns  int
	}{
		{"live child", `echo started; "$SELF" & wait`, []string{"ARMS_TEST_THEN_SLEEP=1"}, "burned", 1},
		{"reaped child", `echo started; "$SELF"; echo reaped; exec sleep 300`, nil, "reaped", 1},
		// A helper shell waits for the burner, then exits: both vanish
		// between two samples, and the burner's time reaches the tree's
		// root through the helper's cutime. It counts once (leftTheTree).
		{"reaped by a helper that exits", `sh -c '"$SELF"; true'; echo reaped; exec sleep 300`, nil, "reaped", 1},
		// The first burner is orphaned (its parent subshell exits) and reaped
		// by init, outside the tree, before the second, reaped by the shell,
		// starts. Both count: the orphan's time is not lost when it leaves.
		// The shell learns that the orphan ended from the end of its output
		// (cat), not by polling the log: a poll's forks cost CPU in the
		// tree, 4 ms each where a fork and exec is slow, and they would
		// count beside the burners.
		{"orphan reaped elsewhere", `("$SELF" &) | cat; sleep 0.3; "$SELF"; echo reaped; exec sleep 300`, nil, "reaped", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			self, err := os.Executable()
			if err != nil {
				t.Fatalf("finding the test binary: %v", err)
			}
			env := append([]string{"SELF=" + self, "ARMS_TEST_BURN=" + burn.String()}, tt.env...)
			log := filepath.Join(t.TempDir(), "head.log")
			a := startArm(t, Spec{Name: "head", Command: []string{"sh", "-c", tt.script}, Env: env, LogPath: log, SampleEvery: 20 * time.Millisecond})
			waitLog(t, a, tt.done)
			want := time.Duration(tt.burns) * burn
			// Ticks round down, and an orphan's last 20 ms sample interval
			// may be missed; the shell and each Go runtime's start add a little.
			// Over high is a burner counted twice, in its own time and in
			// its parent's cutime (rereadParentsFirst).
			low, high := want-time.Duration(tt.burns)*30*time.Millisecond, want+200*time.Millisecond
			waitFor(t, "the orphan's CPU to be counted", func() bool { return a.CPU() >= low })
			time.Sleep(300 * time.Millisecond) // any orphan has exited and been reaped by now
			used := a.CPU()
			t.Logf("%s: the tree used %s (the descendants burned %s)", tt.name, used, want)
			if used < low || used > high {
				t.Fatalf("CPU of the tree %s, want %s to %s (%s burned)", used, low, high, want)
			}
		})
	}
}

// In parallel with the other tests, its cases one after another: each
// service's peak is its own process's, and 96 MiB at a time is enough.
func TestPeakMemory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		mb     int
		hold   string
		sample time.Duration
	}{
		// Held long enough for the sampler to see it.
		{"held allocation", 96, "600ms", 50 * time.Millisecond},
		// Gone between two samples: only the kernel's peak (VmHWM) sees it.
		{"spike between samples", 96, "0s", 10 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddr(t)
			a := startArm(t, Spec{Name: "head", Command: []string{exampled, "--addr", addr},
				Ready: "http://" + addr + "/healthz", SampleEvery: tt.sample})
			a.ResetPeak()
			base := a.RSS()
			if base <= 0 {
				t.Fatalf("RSS of a running service = %d", base)
			}
			get(t, fmt.Sprintf("http://%s/alloc?mb=%d&hold=%s", addr, tt.mb, tt.hold))
			peak := a.Peak()
			t.Logf("RSS before %d MiB, peak %d MiB", base/mib, peak/mib)
			if peak < base+int64(tt.mb-16)*mib {
				t.Fatalf("peak %d MiB, want at least %d MiB over the %d MiB before", peak/mib, tt.mb-16, base/mib)
			}
			// The service gave the memory back; a new window starts low.
			waitFor(t, "RSS to fall after the allocation", func() bool { return a.RSS() < base+32*mib })
			a.ResetPeak()
			if p := a.Peak(); p >= base+32*mib {
				t.Fatalf("peak after ResetPeak %d MiB, want under %d MiB", p/mib, (base+32*mib)/mib)
			}
		})
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
