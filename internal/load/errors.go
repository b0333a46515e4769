package load

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// The error kinds a report counts failures by; errorKind picks one.
const (
	KindRefused      = "connection refused"
	KindReset        = "connection reset"
	KindTimeout      = "timeout"
	KindTLS          = "tls"
	KindClosed       = "closed by target"
	KindMalformed    = "malformed response"
	KindOutOfSockets = "generator out of sockets"
	KindConnect      = "connect"
	KindOther        = "other"
)

// errorKind names a transport failure with one of a few fixed kinds, so a
// report's error table stays short however many requests fail.
func errorKind(err error) string {
	var tlsErr *tlsError
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return KindRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return KindReset
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return KindTimeout
	case errors.As(err, &tlsErr):
		return KindTLS
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return KindClosed
	case errors.Is(err, errMalformed):
		return KindMalformed
	case errors.Is(err, syscall.EADDRNOTAVAIL), errors.Is(err, syscall.EMFILE), errors.Is(err, syscall.ENFILE):
		return KindOutOfSockets
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return KindConnect
	}
	return KindOther
}
