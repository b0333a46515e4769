package load

import "strconv"

// appendRequest appends req as HTTP/1.1 bytes, ready for one write. Host,
// User-Agent and Content-Length are added unless the plan set them.
func appendRequest(b []byte, ep *endpoint, req *Request) []byte {
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
	return append(b, req.Body...)
}
