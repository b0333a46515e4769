package load

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// errorKind names a transport failure with one of a few fixed kinds, so a
// report's error table stays short however many requests fail.
func errorKind(err error) string {
	var tlsErr *tlsError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.As(err, &tlsErr):
		return "tls"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "closed by target"
	case errors.Is(err, errMalformed):
		return "malformed response"
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return "generator out of sockets"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return "connect"
	}
	return "other"
}
