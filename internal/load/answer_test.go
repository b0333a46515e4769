package load

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/perfgate/perfgate/internal/redact"
)

// answerParse feeds in to a fresh parser with the rule, whole and byte by
// byte, and checks both ways of reading agree on whether it is wrong.
func answerParse(t *testing.T, r AnswerRule, in string) (wrong bool, sample *AnswerSample) {
	t.Helper()
	for _, bytewise := range []bool{false, true} {
		m, err := newAnswerMatch(&r, []int{200}, newSampleMasks(redact.New("s3cret")))
		if err != nil {
			t.Fatal(err)
		}
		var p respParser
		p.begin(false, nil, nil, m)
		parts := []string{in}
		if bytewise {
			parts = strings.Split(in, "")
		}
		done := false
		for _, s := range parts {
			_, d, err := p.feed([]byte(s))
			if err != nil {
				t.Fatal(err)
			}
			done = done || d
		}
		if !done {
			t.Fatalf("response not complete: %q", in)
		}
		res := p.result()
		if bytewise && res.wrong != wrong {
			t.Fatalf("byte by byte: wrong %v, whole: %v", res.wrong, wrong)
		}
		wrong, sample = res.wrong, res.sample
		if wrong != (sample != nil) {
			t.Fatalf("wrong %v but sample %v: the first wrong answer carries the sample", wrong, sample)
		}
	}
	return wrong, sample
}

func TestAnswerRule(t *testing.T) {
	id42 := AnswerRule{JSON: []JSONExpect{{Path: "items.0.id", Value: int64(42)}}}
	pad := strings.Repeat("x", MaxAnswerBody)
	for _, tc := range []struct {
		name   string
		rule   AnswerRule
		resp   string
		wrong  bool
		expect string // the sample's expectation
		why    string // part of the sample's reason
	}{
		{"substring found", AnswerRule{Body: `"ok"`}, httpResp("", `{"status":"ok"}`), false, "", ""},
		{"substring missing", AnswerRule{Body: `"ok"`}, httpResp("", `{}`), true, `expect_body "\"ok\""`, "does not contain"},
		{"regexp matches", AnswerRule{Body: `/^\{"id":[0-9]+\}$/`}, httpResp("", `{"id":7}`), false, "", ""},
		{"regexp does not match", AnswerRule{Body: `/^\{"id":[0-9]+\}$/`}, httpResp("", `{"id":"x"}`), true, `expect_body ^\{"id":[0-9]+\}$`, "does not match"},
		{"substring past the bound", AnswerRule{Body: "needle"}, httpResp("", pad+"needle"), true, `expect_body "needle"`, "first 64 KiB"},
		{"JSON path through a list", id42, httpResp("", `{"items":[{"id":42.0}]}`), false, "", ""},
		{"JSON path missing", id42, httpResp("", `{}`), true, `expect_json "items.0.id" = 42`, `the body has no "items"`},
		{"JSON list too short", id42, httpResp("", `{"items":[]}`), true, `expect_json "items.0.id" = 42`, `is a list of 0`},
		{"JSON value differs", id42, httpResp("", `{"items":[{"id":7}]}`), true, `expect_json "items.0.id" = 42`, `"items.0.id" holds 7`},
		{"JSON chunked", id42, chunkedResp("", `{"items":[{"id":42}]}`), false, "", ""},
		{"not JSON", id42, httpResp("", `oops`), true, `expect_json "items.0.id" = 42`, "not JSON"},
		{"JSON too long", id42, httpResp("", `{"pad":"`+pad+`","items":[{"id":42}]}`), true, `expect_json "items.0.id" = 42`, "could not be read whole"},
		{"JSON string and bool", AnswerRule{JSON: []JSONExpect{{Path: "name", Value: "widget"}, {Path: "a.b", Value: true}}},
			httpResp("", `{"name":"widget","a":{"b":true}}`), false, "", ""},
		{"header exact", AnswerRule{Header: []HeaderExpect{{Name: "X-Cache", Value: "HIT"}}}, httpResp("x-cache:  HIT \r\n", "ok"), false, "", ""},
		{"header differs", AnswerRule{Header: []HeaderExpect{{Name: "X-Cache", Value: "HIT"}}}, httpResp("X-Cache: MISS\r\n", "ok"), true, `expect_header X-Cache = "HIT"`, "no x-cache header"},
		{"header regexp", AnswerRule{Header: []HeaderExpect{{Name: "Content-Type", Value: "/^application/json/"}}},
			httpResp("Content-Type: application/json; charset=utf-8\r\n", "{}"), false, "", ""},
		{"header absent", AnswerRule{Header: []HeaderExpect{{Name: "Content-Type", Value: "/json/"}}}, httpResp("", "{}"), true, "expect_header Content-Type = /json/", "no content-type header"},
		{"header on an interim answer only", AnswerRule{Header: []HeaderExpect{{Name: "X-Cache", Value: "HIT"}}},
			"HTTP/1.1 103 Early Hints\r\nX-Cache: HIT\r\n\r\n" + httpResp("", "ok"), true, `expect_header X-Cache = "HIT"`, ""},
		{"a secret in the body is redacted", AnswerRule{Body: "done"}, httpResp("", `key s3cret`), true, `expect_body "done"`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wrong, s := answerParse(t, tc.rule, tc.resp)
			if wrong != tc.wrong {
				t.Fatalf("wrong = %v, want %v (sample %+v)", wrong, tc.wrong, s)
			}
			if !wrong {
				return
			}
			if s.Expectation != tc.expect || !strings.Contains(s.Why, tc.why) || s.Status != 200 {
				t.Errorf("sample %+v, want expectation %s and a reason with %q", s, tc.expect, tc.why)
			}
			if strings.Contains(s.Body, "s3cret") || len(s.Body) > maxSampleBody {
				t.Errorf("sample body %q: must be cut at %d and redacted", s.Body, maxSampleBody)
			}
		})
	}
}

// TestWrongAnswerSampleHidesEverySecret: a wrong answer's sample (the
// body and the reason, which stdout, the exit message and the JSON report
// print) shows no part of a secret. Masked only after the body was cut at
// 512 bytes, or a JSON value at 80, a secret the cut crossed was no longer
// whole, and its start was printed; masked after the escapes, a secret
// holding a tab, a quote or one of <>& was no longer found at all.
func TestWrongAnswerSampleHidesEverySecret(t *testing.T) {
	const token = "Tok3n-9f8e7d6c5b4a"
	pad := func(n int) string { return strings.Repeat("a", n) }
	wantToken := AnswerRule{JSON: []JSONExpect{{Path: "token", Value: "x"}}}
	for _, tc := range []struct {
		name, secret string
		rule         AnswerRule
		body         string
	}{
		{"body: a secret across byte 512", token, AnswerRule{Body: "done"}, pad(maxSampleBody-6) + token + " and more"},
		{"body: a secret ending at byte 512", token, AnswerRule{Body: "done"}, pad(maxSampleBody-len(token)) + token + " and more"},
		{"body: a secret holding a tab", "ab\tcd-secret", AnswerRule{Body: "done"}, "key ab\tcd-secret end"},
		{"reason: a JSON value across the 80-byte cut", token, wantToken, `{"token":"` + pad(70) + token + `"}`},
		{"reason: a secret holding <>& in a JSON value", "p&ss<w0rd>", wantToken, `{"token":"p&ss<w0rd>"}`},
		{"reason: a secret holding a quote in a JSON value", `qu"ote-secret`, wantToken, `{"token":"qu\"ote-secret"}`},
		{"reason: a secret as a JSON key", token, AnswerRule{JSON: []JSONExpect{{Path: "a", Value: "x"}}}, `{"a":{"` + token + `":1}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newAnswerMatch(&tc.rule, []int{200}, newSampleMasks(redact.New(tc.secret)))
			if err != nil {
				t.Fatal(err)
			}
			var p respParser
			p.begin(false, nil, nil, m)
			if _, done, err := p.feed([]byte(httpResp("", tc.body))); err != nil || !done {
				t.Fatalf("done %v err %v", done, err)
			}
			s := p.result().sample
			if s == nil {
				t.Fatal("no sample: the answer was not judged wrong")
			}
			for what, text := range map[string]string{"body": s.Body, "reason": s.Why} {
				if part := secretPart(text, tc.secret); part != "" {
					t.Errorf("the sample's %s %q shows %q of the secret", what, text, part)
				}
			}
			if len(s.Body) > maxSampleBody {
				t.Errorf("sample body of %d bytes, over %d", len(s.Body), maxSampleBody)
			}
		})
	}
}

// secretPart is the longest start of secret, 4 bytes or more, that text
// shows as the body shows it (tabs written \t) or as JSON encodes it
// (quotes and <>& escaped); "" when none.
func secretPart(text, secret string) string {
	enc, _ := json.Marshal(secret)
	forms := []string{secret, strings.ReplaceAll(secret, "\t", `\t`), string(enc[1 : len(enc)-1])}
	for n := len(secret); n >= 4; n-- {
		for _, f := range forms {
			if n <= len(f) && strings.Contains(text, f[:n]) {
				return f[:n]
			}
		}
	}
	return ""
}

// TestShowBodyMasksBeforeTheCut: a difference perfgate ab lists
// (pairs.sameAnswers) shows bodies through ShowBody, which masks the
// secrets in the whole body and cuts what is left: a body that only the
// masks bring under 512 bytes is shown whole.
func TestShowBodyMasksBeforeTheCut(t *testing.T) {
	const secret = "Tok3n-9f8e7d6c5b4a"
	red := redact.New(secret)
	for _, tc := range []struct {
		name, body, want string
		cut              bool
	}{
		{"across the cut", strings.Repeat("a", 508) + secret + "b", strings.Repeat("a", 508) + "***b", false},
		{"longer than the cut once masked", strings.Repeat("a", 510) + secret + "bbb", strings.Repeat("a", 510) + "**", true},
		{"no secret", strings.Repeat("a", 513), strings.Repeat("a", 512), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text, cut := ShowBody([]byte(tc.body), red)
			if text != tc.want || cut != tc.cut {
				t.Errorf("ShowBody = %q, cut %v; want %q, cut %v", text, cut, tc.want, tc.cut)
			}
		})
	}
}

// TestWrongAnswerSampleBuildsNoSet: the secrets' JSON forms are worked
// out once per attack (newSampleMasks), not at each sample, so a sample
// allocates as much with forty secrets as with one. Built at each sample,
// the set costs allocations for every secret.
func TestWrongAnswerSampleBuildsNoSet(t *testing.T) {
	const token = "Tok3n-9f8e7d6c5b4a"
	body := []byte(`{"token":"` + token + `"}`)
	allocs := func(secrets int) float64 {
		vals := []string{token}
		for i := 1; i < secrets; i++ {
			vals = append(vals, fmt.Sprintf("other-secret-%02d", i))
		}
		m, err := newAnswerMatch(&AnswerRule{Body: "done"}, []int{200}, newSampleMasks(redact.New(vals...)))
		if err != nil {
			t.Fatal(err)
		}
		var s *AnswerSample
		n := testing.AllocsPerRun(50, func() {
			s = m.sample(200, body, false, `expect_body "done"`, "the body does not contain it")
		})
		if strings.Contains(s.Body, token) {
			t.Fatalf("sample body %q shows the secret", s.Body)
		}
		return n
	}
	if one, forty := allocs(1), allocs(40); forty != one {
		t.Errorf("a sample allocates %v times with 40 secrets and %v with 1; want the same: the masks are built once per attack", forty, one)
	}
}

// TestAnswerRuleSkipsUnexpectedStatus: a 500 is a wrong status, not also a
// wrong answer, and does not use up the one sample.
func TestAnswerRuleSkipsUnexpectedStatus(t *testing.T) {
	m, err := newAnswerMatch(&AnswerRule{Body: "ok"}, []int{200}, sampleMasks{})
	if err != nil {
		t.Fatal(err)
	}
	feed := func(in string) response {
		var p respParser
		p.begin(false, nil, nil, m)
		if _, done, err := p.feed([]byte(in)); err != nil || !done {
			t.Fatalf("%q: done %v err %v", in, done, err)
		}
		return p.result()
	}
	if r := feed("HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\nfail"); r.wrong || r.sample != nil {
		t.Errorf("500 counted as a wrong answer: %+v", r)
	}
	if r := feed(httpResp("", "nope")); !r.wrong || r.sample == nil || r.sample.Body != "nope" {
		t.Errorf("first wrong answer: %+v", r)
	}
	if r := feed(httpResp("", "nope")); !r.wrong || r.sample != nil {
		t.Errorf("second wrong answer carries a sample again: %+v", r)
	}
}

func TestAnswerRuleRefusals(t *testing.T) {
	for _, r := range []AnswerRule{
		{Body: "/a(/"},
		{JSON: []JSONExpect{{Path: "a..b", Value: true}}},
		{JSON: []JSONExpect{{Path: "a", Value: []int{1}}}},
		{Header: []HeaderExpect{{Name: "X", Value: "/[/"}}},
	} {
		if _, err := newAnswerMatch(&r, nil, sampleMasks{}); err == nil {
			t.Errorf("%+v accepted", r)
		}
	}
	if m, err := newAnswerMatch(&AnswerRule{}, nil, sampleMasks{}); m != nil || err != nil {
		t.Errorf("empty rule: %v %v", m, err)
	}
}

// TestAnswerRuleRightAnswerNoAlloc: a header or text rule met costs no
// allocation per response, and keeps its body buffer from one to the next.
func TestAnswerRuleRightAnswerNoAlloc(t *testing.T) {
	m, err := newAnswerMatch(&AnswerRule{Body: "ok", Header: []HeaderExpect{{Name: "X-Cache", Value: "HIT"}}}, []int{200}, sampleMasks{})
	if err != nil {
		t.Fatal(err)
	}
	in := []byte(httpResp("X-Cache: HIT\r\n", `{"ok":1}`))
	var p respParser
	allocs := testing.AllocsPerRun(100, func() {
		p.begin(false, nil, nil, m)
		if _, _, err := p.feed(in); err != nil {
			t.Fatal(err)
		}
		if r := p.result(); r.wrong {
			t.Fatal("right answer judged wrong")
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per right answer, want 0", allocs)
	}
}

// FuzzAnswerParser: an answer rule never changes a response's framing
// (what is consumed, done, the error), never panics on what a target
// sends, and where the reads split never changes whether it is wrong.
//
//	go test ./internal/load -run '^$' -fuzz FuzzAnswerParser -fuzztime 10s
func FuzzAnswerParser(f *testing.F) {
	f.Add([]byte(httpResp("X-Cache: HIT\r\n", `{"items":[{"id":42}]}`)), uint16(20))
	f.Add([]byte(chunkedResp("", `{"items":[]}`)), uint16(50))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n{\"items\":[{\"id\":42}]}"), uint16(3))
	for _, tc := range parseCases {
		f.Add([]byte(tc.in+tc.next), uint16(len(tc.in)/2))
	}
	rule := &AnswerRule{Body: `/"id":\d+/`, JSON: []JSONExpect{{Path: "items.0.id", Value: 42}}, Header: []HeaderExpect{{Name: "X-Cache", Value: "HIT"}}}
	f.Fuzz(func(t *testing.T, wire []byte, split uint16) {
		type out struct {
			n     int
			done  bool
			err   string
			bytes uint64
			wrong bool
		}
		read := func(m *answerMatch, parts ...[]byte) out {
			var p respParser
			p.begin(false, nil, nil, m)
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
			r := p.result()
			o.bytes, o.wrong = r.bytesIn, r.wrong
			return o
		}
		fresh := func() *answerMatch {
			m, err := newAnswerMatch(rule, []int{200}, sampleMasks{})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
		whole, plain := read(fresh(), wire), read(nil, wire)
		if plain.n != whole.n || plain.done != whole.done || plain.err != whole.err || plain.bytes != whole.bytes {
			t.Fatalf("the rule changed the framing: %+v, without %+v", whole, plain)
		}
		at := int(split) % (len(wire) + 1)
		if parts := read(fresh(), wire[:at], wire[at:]); parts != whole {
			t.Fatalf("split at %d: %+v, whole %+v", at, parts, whole)
		}
	})
}
