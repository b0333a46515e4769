//go:build linux

package load

import (
	"io"
	"net"
	"syscall"
	"unsafe"
)

// rawIO reads and writes a plain TCP connection with raw, non-blocking
// syscalls. A write on loopback runs the target's receive path inside the
// syscall (20-45 µs measured); through net.Conn that is long enough for the
// runtime's sysmon to hand the P to another thread at every request, which
// costs more CPU than the write. The socket is non-blocking, so the raw call
// never blocks: EAGAIN parks the goroutine on the netpoller exactly as
// net.Conn does, and deadlines still apply.
type rawIO struct {
	rc syscall.RawConn
}

func newRawIO(nc net.Conn) io.ReadWriter {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return &rawIO{rc: rc}
}

func (r *rawIO) Write(b []byte) (int, error) {
	written := 0
	var werr error
	err := r.rc.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&b[written])), uintptr(len(b)-written))
			switch e {
			case 0:
				written += int(n)
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				werr = e
				return true
			}
		}
		return true
	})
	if err == nil {
		err = werr
	}
	return written, err
}

func (r *rawIO) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var n int
	var rerr error
	err := r.rc.Read(func(fd uintptr) bool {
		for {
			m, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
			switch e {
			case 0:
				n = int(m)
				if n == 0 {
					rerr = io.EOF
				}
				return true
			case syscall.EINTR:
			case syscall.EAGAIN:
				return false
			default:
				rerr = e
				return true
			}
		}
	})
	if err == nil {
		err = rerr
	}
	return n, err
}
