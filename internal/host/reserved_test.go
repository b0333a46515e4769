package host

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// A port handed out stays out of every other perfgate process's choice
// for Reserved, though it is free to bind again the moment FreePorts
// returns: two gates side by side drew the same port before the first
// one's arm bound it. Each call here stands for another process: only
// the shared file links them.
func TestFreePortsReservedAcrossProcesses(t *testing.T) {
	lo := freeBlock(t, 4)
	path := filepath.Join(t.TempDir(), reservationsFile)
	now := time.Now()
	seen := map[int]bool{}
	for i := range 4 {
		ports, err := freePorts(1, lo, lo+4, path, now.Add(time.Duration(i)*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		p := ports[0]
		if p < lo || p >= lo+4 {
			t.Fatalf("call %d: port %d outside [%d, %d) while the range had an unreserved free port", i, p, lo, lo+4)
		}
		if seen[p] {
			t.Fatalf("call %d: port %d handed out again within %s", i, p, Reserved)
		}
		seen[p] = true
	}
	// The range is all reserved: the kernel's choice, outside it.
	ports, err := freePorts(1, lo, lo+4, path, now.Add(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if seen[ports[0]] {
		t.Fatalf("port %d handed out again while every port of the range was reserved", ports[0])
	}
	// Past Reserved the range is drawn from again, and the old lines are
	// dropped from the file.
	later := now.Add(Reserved + 10*time.Second)
	ports, err = freePorts(1, lo, lo+4, path, later)
	if err != nil {
		t.Fatal(err)
	}
	if !seen[ports[0]] {
		t.Errorf("after %s: port %d, want one of the range again", Reserved, ports[0])
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), strconv.Itoa(ports[0])+" "+strconv.FormatInt(later.Unix(), 10)+"\n"; got != want {
		t.Errorf("the list holds %q, want only %q", got, want)
	}
}

// A list this process cannot open leaves the bind check alone.
func TestFreePortsWithoutTheList(t *testing.T) {
	lo := freeBlock(t, 4)
	ports, err := freePorts(2, lo, lo+4, filepath.Join(t.TempDir(), "no-such-folder", reservationsFile), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 2 || ports[0] == ports[1] {
		t.Fatalf("ports %v, want two distinct", ports)
	}
}

// freeBlock finds n consecutive loopback ports below the ephemeral range
// that nothing listens on now.
func freeBlock(t *testing.T, n int) int {
	t.Helper()
	for lo := 20000 + os.Getpid()%10000; lo < 32000; lo += n {
		free := true
		for p := lo; p < lo+n && free; p++ {
			l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				free = false
				continue
			}
			l.Close()
		}
		if free {
			return lo
		}
	}
	t.Fatal("no block of free ports")
	return 0
}
