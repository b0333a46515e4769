package pairs

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/perfgate/perfgate/internal/judge"
	"github.com/perfgate/perfgate/internal/load"
	"github.com/perfgate/perfgate/internal/plan"
	"github.com/perfgate/perfgate/internal/redact"
)

// The plan's [ab] answers = "same" asks the gate to check that the head
// gives the base's answers, not only answers as fast: before the first
// pair's warm-up, the same requests (the first pair's warm-up data, same
// seed, so the measured data stays unread) go to both arms one at a time
// and their answers are compared, JSON-aware, without the fields the plan
// lets differ (ignore = ["id", "created_at"]).

// sameAnswersPerGroup is how many requests of each group are compared.
const sameAnswersPerGroup = 5

// compareAnswers sends the sample to both arms and lists the requests they
// answered differently.
func compareAnswers(ctx context.Context, p *plan.Plan, v *plan.Vars, seed int64, base, head Arm) (*judge.SameAnswers, error) {
	out := &judge.SameAnswers{Mode: p.AB.Answers, Ignore: p.AB.Ignore}
	var srcs [2]load.Source
	for i, arm := range []Arm{base, head} {
		src, _, err := p.PairSource(v, seed, 0, p.AB.Pairs)
		if err != nil {
			return nil, err
		}
		// Each arm its own proofs: a DPoP proof names the URL it is for.
		src, stop, err := p.DPoP(ctx, src, v, arm.URL)
		if err != nil {
			return nil, err
		}
		defer stop()
		srcs[i] = src
	}
	clients := [2]*http.Client{}
	for i, arm := range []Arm{base, head} {
		c, err := armClient(arm)
		if err != nil {
			return nil, err
		}
		clients[i] = c
	}
	urls := [2]string{base.URL, head.URL}
	got := make([]int, len(p.Groups))
	for draws := 0; draws < 10*sameAnswersPerGroup*len(p.Groups) && !allAt(got, sameAnswersPerGroup); draws++ {
		reqs := [2]load.Request{srcs[0].Next(load.Warmup), srcs[1].Next(load.Warmup)}
		g := reqs[0].Group
		if g < 0 || g >= len(got) || got[g] >= sameAnswersPerGroup {
			continue
		}
		got[g]++
		out.Compared++
		var ans [2]answer
		for i := range ans {
			ans[i] = ask(ctx, clients[i], urls[i], reqs[i])
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("comparing the arms' answers: %w", ctx.Err())
		}
		if ans[0].same(ans[1], p.AB.Ignore) {
			continue
		}
		red := v.Redactor()
		out.Differences = append(out.Differences, judge.AnswerDifference{
			Group:   p.Groups[g].Name,
			Request: red.String(reqs[0].Method + " " + reqs[0].Path),
			Base:    ans[0].show(red),
			Head:    ans[1].show(red),
		})
	}
	return out, nil
}

func allAt(counts []int, n int) bool {
	for _, c := range counts {
		if c < n {
			return false
		}
	}
	return true
}

// armClient is an HTTP client for one arm, trusting its CA when it has one.
func armClient(a Arm) (*http.Client, error) {
	tr := &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 1}
	if a.CAFile != "" {
		pem, err := os.ReadFile(a.CAFile)
		if err != nil {
			return nil, fmt.Errorf("reading the %s arm's CA to compare its answers: %w", a.Name, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("the %s arm's CA file %s holds no PEM certificate", a.Name, a.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, nil
}

// answer is one arm's answer to one request of the sample.
type answer struct {
	status int    // 0: no answer
	body   []byte // at most load.MaxAnswerBody bytes
	failed string // why there was no answer
}

func ask(ctx context.Context, c *http.Client, base string, r load.Request) answer {
	req, err := http.NewRequestWithContext(ctx, r.Method, strings.TrimSuffix(base, "/")+r.Path, bytes.NewReader(r.Body))
	if err != nil {
		return answer{failed: err.Error()}
	}
	for _, h := range r.Header {
		if strings.EqualFold(h.Name, "Host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := c.Do(req)
	if err != nil {
		return answer{failed: "no answer"}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, load.MaxAnswerBody))
	if err != nil {
		return answer{status: resp.StatusCode, failed: "the body could not be read"}
	}
	return answer{status: resp.StatusCode, body: body}
}

// same compares two answers: the status, and the bodies as JSON without
// the ignored fields when both are JSON, else byte for byte.
func (a answer) same(b answer, ignore []string) bool {
	if a.status != b.status || a.failed != b.failed {
		return false
	}
	var ja, jb any
	if json.Unmarshal(a.body, &ja) != nil || json.Unmarshal(b.body, &jb) != nil {
		return bytes.Equal(a.body, b.body)
	}
	for _, f := range ignore {
		ja, jb = without(ja, f), without(jb, f)
	}
	return reflect.DeepEqual(ja, jb)
}

// without removes an ignored field from a decoded document: a plain name
// ("id") wherever it occurs, a dotted path ("meta.etag", "items.0.id")
// there only.
func without(doc any, field string) any {
	if !strings.Contains(field, ".") {
		return dropName(doc, field)
	}
	dropPath(doc, strings.Split(field, "."))
	return doc
}

func dropName(doc any, name string) any {
	switch x := doc.(type) {
	case map[string]any:
		delete(x, name)
		for k, v := range x {
			x[k] = dropName(v, name)
		}
	case []any:
		for i, v := range x {
			x[i] = dropName(v, name)
		}
	}
	return doc
}

func dropPath(doc any, path []string) {
	for i, k := range path {
		last := i == len(path)-1
		switch x := doc.(type) {
		case map[string]any:
			if last {
				delete(x, k)
				return
			}
			doc = x[k]
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n < 0 || n >= len(x) || last {
				return // a list's element is compared, not dropped
			}
			doc = x[n]
		default:
			return
		}
	}
}

// show is the answer as a difference lists it: "200 {...}".
func (a answer) show(red *redact.Set) string {
	if a.failed != "" && a.status == 0 {
		return a.failed
	}
	text, cut := load.ShowBody(a.body, red)
	if cut {
		text += " (cut)"
	}
	return fmt.Sprintf("%d %s", a.status, text)
}
