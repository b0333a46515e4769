package publish

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncateKeepsRunesWhole(t *testing.T) {
	for _, tc := range []struct {
		s     string
		limit int
		want  string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc"},
		{"aé", 2, "a"}, // é is two bytes
		{"測試", 5, "測"},
		{"🐢🐢", 7, "🐢"},
		{"abc", 0, ""},
		{"abc", -4, ""},
	} {
		if got := truncate(tc.s, tc.limit); got != tc.want || !utf8.ValidString(got) {
			t.Errorf("truncate(%q, %d) = %q, want %q", tc.s, tc.limit, got, tc.want)
		}
	}
}

func TestCutNoteWithinTheLimit(t *testing.T) {
	for _, limit := range []int{MaxCheckOutput, MaxCommentBody, 400} {
		for _, s := range []string{strings.Repeat("x", limit+1), strings.Repeat("é", limit), strings.Repeat("row\n", limit)} {
			got, was := cut(s, limit)
			if !was || len(got) > limit || !utf8.ValidString(got) || !strings.HasSuffix(got, "the JSON report.*\n") {
				t.Errorf("limit %d: cut to %d bytes, cut %v, valid %v", limit, len(got), was, utf8.ValidString(got))
			}
		}
	}
}
