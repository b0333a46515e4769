package publish

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// GitHub's limits on what one request may carry.
const (
	// MaxCheckOutput is the most a check run's output.summary (and text)
	// may hold: 65,535 characters.
	MaxCheckOutput = 65535
	// MaxCommentBody is the most an issue or pull-request comment may hold.
	MaxCommentBody = 65536
	// MaxAnnotationTitle is the most an annotation's title may hold.
	MaxAnnotationTitle = 255
	// AnnotationsPerRequest is the most annotations one create or update
	// of a check run may carry; further ones go in further updates.
	AnnotationsPerRequest = 50
)

// cutNote ends a text that was cut, so a reader knows the rest exists.
const cutNote = "\n\n---\n*perfgate cut this text here to stay within GitHub's limit of %d characters; the whole report is in the job summary and the JSON report.*\n"

// cut returns s unchanged when it fits in limit bytes, else its head
// followed by a note saying it was cut, the whole within limit bytes.
// It counts bytes, not characters: a byte count within the limit is
// within it however GitHub counts (code points or UTF-16 units), since
// UTF-8 never takes fewer bytes than either. The cut falls on a rune
// boundary, at a line's end when one is near, so a Markdown table row is
// not left half written.
func cut(s string, limit int) (string, bool) {
	if len(s) <= limit {
		return s, false
	}
	note := fmt.Sprintf(cutNote, limit)
	head := truncate(s, limit-len(note))
	// A line end within the last 2 KiB is a cleaner place to stop.
	if nl := strings.LastIndexByte(head, '\n'); nl >= 0 && len(head)-nl < 2048 {
		head = head[:nl]
	}
	return head + note, true
}

// truncate returns the longest head of s within limit bytes that ends on a
// rune boundary.
func truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	keep := max(limit, 0)
	for keep > 0 && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep]
}
