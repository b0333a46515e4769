package load

import (
	"errors"
	"io"
	"syscall"
	"time"
)

// staleAfter is how long a pooled connection may sit idle before it is
// checked on reuse. Servers close keep-alive connections left idle (gunicorn
// after 2 s, Node after 5 s, nginx after 75 s), and a close that came while
// the connection sat in the pool is no request's failure.
const staleAfter = 20 * time.Millisecond

// retryable says whether a request that failed with err on a reused
// connection, before any byte of its answer, goes again once on a new
// connection: the target closed the connection as the request went out (the
// keep-alive race), so it never took it. Only idempotent methods, as
// net/http does: a POST the target may have taken is not sent twice.
func retryable(method string, err error) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
	default:
		return false
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
