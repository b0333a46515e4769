package load

import "testing"

// FuzzParser feeds any bytes to the response parser whole, split in two
// and a byte at a time: where the socket's reads fall must never change
// what a response is (done, status, bytes, keep-alive, the error), and
// nothing the target sends may make the parser panic or claim bytes it was
// not given. Seeded with every case of parseCases.
//
//	go test ./internal/load -run '^$' -fuzz FuzzParser -fuzztime 10s
func FuzzParser(f *testing.F) {
	for _, tc := range parseCases {
		f.Add([]byte(tc.in+tc.next), uint16(len(tc.in)/2), tc.head, tc.eof, tc.timingHd != "")
	}
	f.Fuzz(func(t *testing.T, wire []byte, split uint16, head, eof, named bool) {
		tc := parseCase{head: head, eof: eof}
		if named {
			tc.timingHd = "x-took-ms"
		}
		s := string(wire)
		var p respParser
		whole := parseParts(t, &p, tc, []string{s})
		if whole.consumed > len(s) || whole.resp.bytesIn != uint64(whole.consumed) {
			t.Fatalf("consumed %d, bytesIn %d of %d bytes", whole.consumed, whole.resp.bytesIn, len(s))
		}
		if whole.err == nil && !whole.done && whole.consumed != len(s) {
			t.Fatalf("consumed %d of %d bytes without finishing or failing", whole.consumed, len(s))
		}
		if whole.keep && !whole.done {
			t.Fatalf("keep-alive on a response that did not finish")
		}
		i := int(split) % (len(s) + 1)
		if o := parseParts(t, &p, tc, []string{s[:i], s[i:]}); !sameOutcome(o, whole) {
			t.Fatalf("split at %d: %+v (%v); whole: %+v (%v)", i, o, o.err, whole, whole.err)
		}
		bytewise := make([]string, len(s))
		for k := 0; k < len(s); k++ { // bytes, not runes
			bytewise[k] = s[k : k+1]
		}
		if o := parseParts(t, &p, tc, bytewise); !sameOutcome(o, whole) {
			t.Fatalf("a byte at a time: %+v (%v); whole: %+v (%v)", o, o.err, whole, whole.err)
		}
	})
}
