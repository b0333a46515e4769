package load

import "strconv"

// inlineBody is the largest body appendRequest copies after the head, so
// that a small request is one write.
const inlineBody = 16 << 10

// appendRequest appends req as HTTP/1.1 bytes, ready for one write. Host,
// User-Agent and Content-Length are added unless the plan set them.
//
// A body of up to inlineBody bytes is appended after the head; a larger
// one is returned as rest, for the caller to send from the request's own
// bytes after the head rather than copy: copied, a 4 MiB upload cost each
// request a 4 MiB buffer of its own connection's and a copy into it, and
// at 50 such uploads a second (a 413 closes each connection) the copies
// and their page faults took a core under the race detector.
func appendRequest(b []byte, ep *endpoint, req *Request) (head, rest []byte) {
	b = append(b, req.Method...)
	b = append(b, ' ')
	b = append(b, ep.prefix...)
	b = append(b, req.Path...)
	b = append(b, " HTTP/1.1\r\n"...)
	hasHost, hasUA, hasLen := false, false, false
	for _, h := range req.Header {
		switch {
		case asciiEqualFold(h.Name, "host"):
			hasHost = true
		case asciiEqualFold(h.Name, "user-agent"):
			hasUA = true
		case asciiEqualFold(h.Name, "content-length"):
			hasLen = true
		}
		b = append(b, h.Name...)
		b = append(b, ": "...)
		b = append(b, h.Value...)
		b = append(b, "\r\n"...)
	}
	if !hasHost {
		b = append(b, "Host: "...)
		b = append(b, ep.host...)
		b = append(b, "\r\n"...)
	}
	if !hasUA {
		b = append(b, "User-Agent: perfgate\r\n"...)
	}
	if !hasLen && (len(req.Body) > 0 || req.Method == "POST" || req.Method == "PUT" || req.Method == "PATCH") {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.Body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	if len(req.Body) > inlineBody {
		return b, req.Body
	}
	return append(b, req.Body...), nil
}
