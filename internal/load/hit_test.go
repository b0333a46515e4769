package load

import (
	"fmt"
	"strings"
	"testing"
)

func mustHitMatch(t *testing.T, r HitRule) *hitMatch {
	t.Helper()
	m, err := newHitMatch(&r)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// hitParse feeds in to a parser with the rule, cut at every split point
// (and byte by byte), and checks each way of reading agrees.
func hitParse(t *testing.T, m *hitMatch, in string, eof bool) response {
	t.Helper()
	var ways [][]string
	ways = append(ways, []string{in})
	for i := 1; i < len(in); i += max(1, len(in)/97) {
		ways = append(ways, []string{in[:i], in[i:]})
	}
	bytewise := make([]string, len(in))
	for i := range in {
		bytewise[i] = in[i : i+1]
	}
	ways = append(ways, bytewise)
	var first response
	var p respParser
	for w, parts := range ways {
		p.resetHit(false, nil, m)
		done := false
		for _, part := range parts {
			_, d, err := p.feed([]byte(part))
			if err != nil {
				t.Fatalf("split %d: %v", w, err)
			}
			if d {
				done = true
				break
			}
		}
		if !done && eof {
			d, err := p.eof()
			if err != nil || !d {
				t.Fatalf("split %d: eof %v %v", w, d, err)
			}
			done = true
		}
		if !done {
			t.Fatalf("split %d: response not complete", w)
		}
		r := p.result()
		if w == 0 {
			first = r
		} else if r != first {
			t.Fatalf("split %d: %+v, unsplit %+v", w, r, first)
		}
	}
	return first
}

func httpResp(headers, body string) string {
	return fmt.Sprintf("HTTP/1.1 200 OK\r\n%sContent-Length: %d\r\n\r\n%s", headers, len(body), body)
}

func chunkedResp(headers, body string) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n" + headers + "Transfer-Encoding: chunked\r\n\r\n")
	for len(body) > 0 {
		n := min(len(body), 7)
		fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body[:n])
		body = body[n:]
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

func TestHitHeader(t *testing.T) {
	withValue := mustHitMatch(t, HitRule{Header: "X-Cache", Value: "HIT"})
	present := mustHitMatch(t, HitRule{Header: "x-cache"})
	for _, tc := range []struct {
		name    string
		m       *hitMatch
		headers string
		hit     bool
	}{
		{"value matches, any case of the name", withValue, "x-CACHE:   HIT  \r\n", true},
		{"value differs", withValue, "X-Cache: MISS\r\n", false},
		{"value differs by case", withValue, "X-Cache: hit\r\n", false},
		{"header absent", withValue, "Server: x\r\n", false},
		{"present", present, "X-Cache: MISS\r\n", true},
		{"present: absent", present, "X-Cachex: HIT\r\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := hitParse(t, tc.m, httpResp(tc.headers, "ok"), false); r.hit != tc.hit || r.hitBeyond {
				t.Errorf("hit %v beyond %v, want hit %v", r.hit, r.hitBeyond, tc.hit)
			}
		})
	}
	// A hit header on an interim answer is not the final answer's.
	in := "HTTP/1.1 103 Early Hints\r\nX-Cache: HIT\r\n\r\n" + httpResp("", "ok")
	if r := hitParse(t, withValue, in, false); r.hit || r.status != 200 {
		t.Errorf("interim header counted: %+v", r)
	}
}

// TestHitStatus: a status rule judges the final answer's status, never an
// interim one's.
func TestHitStatus(t *testing.T) {
	m := mustHitMatch(t, HitRule{Status: []int{203, 100}})
	for _, tc := range []struct {
		name string
		in   string
		hit  bool
	}{
		{"the status", "HTTP/1.1 203 Non-Authoritative Information\r\nContent-Length: 2\r\n\r\nok", true},
		{"another status", httpResp("", "ok"), false},
		{"after an interim answer with a listed status", "HTTP/1.1 100 Continue\r\n\r\n" + httpResp("", "ok"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if r := hitParse(t, m, tc.in, false); r.hit != tc.hit || r.hitBeyond {
				t.Errorf("hit %v beyond %v, want hit %v", r.hit, r.hitBeyond, tc.hit)
			}
		})
	}
}

func TestHitField(t *testing.T) {
	t.Parallel()
	hitTrue := mustHitMatch(t, HitRule{Field: "cache.hit", FieldValue: true})
	state := mustHitMatch(t, HitRule{Field: "cache.state", FieldValue: "fresh"})
	tier := mustHitMatch(t, HitRule{Field: "tier", FieldValue: 2})
	pad := strings.Repeat("x", MaxHitBody)
	for _, tc := range []struct {
		name         string
		m            *hitMatch
		body         string
		chunked, eof bool
		hit, beyond  bool
	}{
		{"JSON hit", hitTrue, `{"cache":{"hit":true}}`, false, false, true, false},
		{"JSON hit, chunked", hitTrue, `{"id":1,"cache":{"hit":true,"age":3}}`, true, false, true, false},
		{"JSON hit, body to the close", hitTrue, `{"cache":{"hit":true}}`, false, true, true, false},
		{"JSON miss", hitTrue, `{"cache":{"hit":false}}`, false, false, false, false},
		{"JSON field absent", hitTrue, `{"cache":{}}`, false, false, false, false},
		{"JSON path through a non-object", hitTrue, `{"cache":true}`, false, false, false, false},
		{"JSON value of another type", hitTrue, `{"cache":{"hit":"true"}}`, false, false, false, false},
		{"not JSON", hitTrue, `ok`, false, false, false, false},
		{"string value", state, `{"cache":{"state":"fresh"}}`, false, false, true, false},
		{"number value", tier, `{"tier":2.0}`, false, false, true, false},
		{"number miss", tier, `{"tier":3}`, false, false, false, false},
		{"field within the bound", hitTrue, `{"cache":{"hit":true},"pad":"` + pad[:MaxHitBody-40] + `"}`, false, false, true, false},
		{"field beyond the bound", hitTrue, `{"pad":"` + pad + `","cache":{"hit":true}}`, false, false, false, true},
		{"field beyond the bound, chunked", hitTrue, `{"pad":"` + pad + `","cache":{"hit":true}}`, true, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var in string
			switch {
			case tc.chunked:
				in = chunkedResp("", tc.body)
			case tc.eof:
				in = "HTTP/1.1 200 OK\r\n\r\n" + tc.body
			default:
				in = httpResp("Content-Type: application/json\r\n", tc.body)
			}
			r := hitParse(t, tc.m, in, tc.eof)
			if r.hit != tc.hit || r.hitBeyond != tc.beyond {
				t.Errorf("hit %v beyond %v, want %v %v", r.hit, r.hitBeyond, tc.hit, tc.beyond)
			}
			if r.bytesIn != uint64(len(in)) {
				t.Errorf("bytesIn %d of %d", r.bytesIn, len(in))
			}
		})
	}
}

// TestHitReusesBuffers: a header rule costs no allocation per response, and
// a field rule's body buffer is made once and reused.
func TestHitReusesBuffers(t *testing.T) {
	var p respParser
	head := mustHitMatch(t, HitRule{Header: "X-Cache", Value: "HIT"})
	in := []byte(httpResp("X-Cache: HIT\r\n", `{"cache":{"hit":true}}`))
	if a := testing.AllocsPerRun(100, func() {
		p.resetHit(false, nil, head)
		if _, done, err := p.feed(in); !done || err != nil || !p.result().hit {
			t.Fatal("not a hit")
		}
	}); a != 0 {
		t.Errorf("header rule: %v allocations per response, want 0", a)
	}
	field := mustHitMatch(t, HitRule{Field: "cache.hit", FieldValue: true})
	p.resetHit(false, nil, field)
	p.feed(in)
	p.result()
	buf := &p.body[:1][0]
	p.resetHit(false, nil, field)
	p.feed(in)
	if !p.result().hit || &p.body[:1][0] != buf {
		t.Error("the body buffer was not reused")
	}
	// Without a rule no body byte is kept.
	p = respParser{}
	p.reset(false, nil)
	p.feed(in)
	if p.body != nil || p.result().hit {
		t.Error("a parser without a rule kept the body")
	}
}

func TestHitRuleRefusals(t *testing.T) {
	for _, r := range []HitRule{
		{Header: "X-Cache", Field: "a"},
		{Status: []int{203}, Header: "X-Cache"},
		{Status: []int{203}, Field: "a", FieldValue: true},
		{Field: "a..b", FieldValue: true},
		{Field: "a", FieldValue: []int{1}},
	} {
		if _, err := newHitMatch(&r); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	if m, err := newHitMatch(&HitRule{}); m != nil || err != nil {
		t.Errorf("empty rule: %v %v", m, err)
	}
}

// FuzzHitParser: a hit rule never changes a response's framing (what is
// consumed, done, the error), and where the reads split never changes
// whether it is a hit.
//
//	go test ./internal/load -run '^$' -fuzz FuzzHitParser -fuzztime 10s
func FuzzHitParser(f *testing.F) {
	f.Add([]byte(httpResp("X-Cache: HIT\r\n", `{"cache":{"hit":true}}`)), uint16(20), false)
	f.Add([]byte(chunkedResp("", `{"cache":{"hit":true}}`)), uint16(50), true)
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n{\"cache\":{\"hit\":true}}"), uint16(3), true)
	for _, tc := range parseCases {
		f.Add([]byte(tc.in+tc.next), uint16(len(tc.in)/2), true)
	}
	header := &hitMatch{header: []byte("x-cache"), value: []byte("HIT"), hasValue: true}
	field := &hitMatch{field: []string{"cache", "hit"}, fieldValue: true}
	f.Fuzz(func(t *testing.T, wire []byte, split uint16, byField bool) {
		m := header
		if byField {
			m = field
		}
		type out struct {
			n    int
			done bool
			err  string
			r    response
		}
		run := func(m *hitMatch, parts ...[]byte) out {
			var p respParser
			p.resetHit(false, nil, m)
			var o out
			for _, b := range parts {
				n, done, err := p.feed(b)
				o.n += n
				if err != nil {
					o.err = err.Error()
				}
				if done || err != nil {
					o.done = done
					break
				}
			}
			if !o.done && o.err == "" {
				if d, err := p.eof(); err != nil {
					o.err = err.Error()
				} else {
					o.done = d
				}
			}
			o.r = p.result()
			return o
		}
		whole := run(m, wire)
		plain := run(nil, wire)
		if plain.n != whole.n || plain.done != whole.done || plain.err != whole.err || plain.r.bytesIn != whole.r.bytesIn {
			t.Fatalf("the rule changed the framing: %+v, without %+v", whole, plain)
		}
		if plain.r.hit || plain.r.hitBeyond {
			t.Fatal("a hit without a rule")
		}
		i := int(split) % (len(wire) + 1)
		if o := run(m, wire[:i], wire[i:]); o.r.hit != whole.r.hit || o.r.hitBeyond != whole.r.hitBeyond {
			t.Fatalf("split at %d: %+v; whole %+v", i, o, whole)
		}
	})
}
