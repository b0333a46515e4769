package redact

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/exit"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"none", nil, "Bearer tok", "Bearer tok"},
		{"one", []string{"tok"}, "Bearer tok, again tok", "Bearer ***, again ***"},
		{"longest at a start", []string{"ab", "abcd"}, "xabcdx", "x***x"},
		{"earliest wins", []string{"xyzab", "za"}, "xyzab", "***"},
		{"empty ignored", []string{"", "s"}, "a s", "a ***"},
		{"adjacent", []string{"s"}, "sss", "*********"},
		{"escaped form", []string{"the boss", "the%20boss"}, "GET /u/the%20boss", "GET /u/***"},
	} {
		if got := New(tc.secrets...).String(tc.in); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	var nilSet *Set
	if got := nilSet.String("x"); got != "x" {
		t.Errorf("a nil set changed the text: %q", got)
	}
}

// writeSplit writes in through a Writer cut at every split point given.
func writeSplit(t *testing.T, s *Set, in string, cuts []int) string {
	t.Helper()
	var out bytes.Buffer
	w := s.NewWriter(&out)
	prev := 0
	for _, c := range cuts {
		if c < prev || c > len(in) {
			continue
		}
		if n, err := w.Write([]byte(in[prev:c])); err != nil || n != c-prev {
			t.Fatalf("Write = %d, %v", n, err)
		}
		prev = c
	}
	if _, err := w.Write([]byte(in[prev:])); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func TestWriterSplitSecrets(t *testing.T) {
	s := New("tok-SECRET-42", "tok")
	in := "GET / Authorization: Bearer tok-SECRET-42\nX: tok\n"
	for cut := 0; cut <= len(in); cut++ {
		got := writeSplit(t, s, in, []int{cut})
		if want := "GET / Authorization: Bearer ***\nX: ***\n"; got != want {
			t.Fatalf("cut at %d: %q, want %q", cut, got, want)
		}
	}
	// Byte by byte, the way a slow log writer may deliver it.
	var cuts []int
	for i := range in {
		cuts = append(cuts, i)
	}
	if got := writeSplit(t, s, in, cuts); strings.Contains(got, "SECRET") {
		t.Fatalf("byte-wise writes leaked: %q", got)
	}
}

func TestWriterHoldsOnlyWhatMayBeASecret(t *testing.T) {
	var out bytes.Buffer
	w := New("secret").NewWriter(&out)
	fmt.Fprint(w, "a line\nends with sec")
	if got := out.String(); got != "a line\nends with " {
		t.Fatalf("written before the secret is decided: %q", got)
	}
	fmt.Fprint(w, "ond line\n")
	if got := out.String(); got != "a line\nends with second line\n" {
		t.Fatalf("after the undecided tail turned out harmless: %q", got)
	}
}

func TestError(t *testing.T) {
	inner := exit.Refusef("dial tcp: lookup tok-SECRET.example: no such host")
	err := New("tok-SECRET").Error(fmt.Errorf("perfgate load: %w", inner))
	if strings.Contains(err.Error(), "SECRET") {
		t.Fatalf("message kept the secret: %v", err)
	}
	if exit.Code(err) != exit.CannotJudge || !errors.Is(err, inner) {
		t.Fatalf("the chain was lost: code %d", exit.Code(err))
	}
	if New("x").Error(nil) != nil {
		t.Fatal("a nil error became non-nil")
	}
}

// FuzzWriter: however a stream is cut into writes, the Writer writes what
// String makes of the whole text.
func FuzzWriter(f *testing.F) {
	f.Add("Bearer tok-1 and tok", "tok-1", "tok", uint8(3), uint8(9))
	f.Add("xyzab", "xyzab", "za", uint8(2), uint8(4))
	f.Add("aaaa", "aa", "a", uint8(1), uint8(1))
	f.Fuzz(func(t *testing.T, in, s1, s2 string, c1, c2 uint8) {
		s := New(s1, s2)
		want := s.String(in)
		if got := writeSplit(t, s, in, []int{int(c1), int(c1) + int(c2)}); got != want {
			t.Fatalf("split at %d,%d: %q, whole: %q", c1, int(c1)+int(c2), got, want)
		}
		for _, sec := range []string{s1, s2} {
			// Unmasked text never holds a whole secret; only one made of
			// asterisks could be formed by a mask and its neighbours.
			if sec != "" && !strings.Contains(sec, "*") && strings.Contains(want, sec) {
				t.Fatalf("secret %q survives in %q", sec, want)
			}
		}
	})
}

// BenchmarkWriterLogLines: an arm logging 120-byte lines through a set
// holding a 1 KB token (a JWT's size) and its escaped form.
func BenchmarkWriterLogLines(b *testing.B) {
	tok := "eyJ" + strings.Repeat("a1B2c3D4", 128)
	s := New(tok, tok+"%3D")
	line := []byte(`2026-12-01T10:00:00Z INFO GET /items/42 status=200 dur=1.2ms user-agent="perfgate" remote=127.0.0.1:5555` + "\n")
	w := s.NewWriter(io.Discard)
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Write(line); err != nil {
			b.Fatal(err)
		}
	}
}

// TestURLsIn: every URL's user part in a program's output is masked, the
// rest of the text left as it is.
func TestURLsIn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"dial postgres://perf:s3cr@t@127.0.0.1:5432/db: refused", "dial postgres://***@127.0.0.1:5432/db: refused"},
		{"a http://u@h/x and redis://:pw@h:6379 too", "a http://***@h/x and redis://***@h:6379 too"},
		{"mail me at dev@example.com; see http://h/a@b", "mail me at dev@example.com; see http://h/a@b"},
	} {
		if got := URLsIn(tc.in); got != tc.want {
			t.Errorf("URLsIn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
