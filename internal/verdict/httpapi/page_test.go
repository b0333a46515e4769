package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfgate/perfgate/internal/report"
	"github.com/perfgate/perfgate/internal/report/reporttest"
	"github.com/perfgate/perfgate/internal/testtier"
	"github.com/perfgate/perfgate/internal/verdict"
	"github.com/perfgate/perfgate/internal/verdict/db/dbtest"
	"github.com/perfgate/perfgate/internal/verdict/httpapi"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// seededPage serves the page over a store holding six runs of acme/api
// on two CPU models: passes, a regression, and a run that retried.
func seededPage(t *testing.T) (url string, metrics int) {
	t.Helper()
	st := dbtest.Open(t, "sqlite")
	clock := time.Date(2026, 11, 3, 10, 0, 0, 0, time.UTC)
	svc := verdict.New(st, verdict.Config{StallProne: []string{"Intel Xeon 8370C"}, Now: func() time.Time {
		clock = clock.Add(time.Minute)
		return clock
	}})
	ctx := context.Background()
	post := func(run int64, n, exit int, model string, r *report.Report) {
		rep, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Ingest(ctx, verdict.Submission{Facts: verdict.Facts{Repository: "acme/api", Event: "pull_request",
			HeadSHA: sha(int(run) * 0x1111), PR: int(40 + run), RunID: run, RunAttempt: 1, Attempt: n, CPUModel: model, ExitCode: &exit}, Report: rep})
		if err != nil {
			t.Fatal(err)
		}
	}
	epyc := "AMD EPYC 7763"
	post(1, 1, 0, epyc, reporttest.Pass())
	post(2, 1, 0, epyc, reporttest.Pass())
	post(3, 1, 2, "Intel Xeon 8370C", reporttest.CannotJudge())
	post(3, 2, 0, epyc, reporttest.Pass())
	post(4, 1, 1, epyc, reporttest.Regression())
	post(5, 1, 0, epyc, reporttest.Pass())
	post(6, 1, 2, epyc, reporttest.CannotJudge())
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{}))
	t.Cleanup(srv.Close)
	return srv.URL, len(reporttest.Pass().Verdict.Metrics)
}

// browser is a headless Chromium (Debian's chromium package), ended in
// t's Cleanup.
func browser(t *testing.T) context.Context {
	t.Helper()
	testtier.Heavy(t, testtier.Chromium)
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the page test needs headless Chromium: apt-get install -y chromium (%v)", err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.WindowSize(1200, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	tctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return tctx
}

func TestPageInChromium(t *testing.T) {
	url, metrics := seededPage(t)
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/r/acme/api"), chromedp.WaitVisible(chromedp.CSS("#verdicts"))); err != nil {
		t.Fatalf("rendering the page in Chromium: %v", err)
	}
	count := func(sel string) int {
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](fmt.Sprintf("document.querySelectorAll(%q).length", sel)))
		if err != nil {
			t.Fatalf("counting %s: %v", sel, err)
		}
		return n
	}
	text := func(sel string) string {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("reading %s: %v", sel, err)
		}
		return s
	}
	if n := count("#verdicts tr.verdict-row"); n != 6 {
		t.Errorf("%d verdict rows, want 6 (one per run)", n)
	}
	if charts, svgs := count("figure.trend"), count("figure.trend > svg"); charts != metrics || svgs != metrics {
		t.Errorf("%d charts holding %d SVGs, want one SVG for each of the %d metrics", charts, svgs, metrics)
	}
	if n := count("figure.trend > svg circle"); n != 5*metrics {
		t.Errorf("%d points in the charts, want %d (5 final runs with metrics, %d metrics)", n, 5*metrics, metrics)
	}
	if v := text("#verdicts tr.verdict-row:first-child td:nth-child(5)"); v != "pending" {
		t.Errorf("the newest run's verdict cell reads %q, want pending (its attempt 1 could not be judged and a retry is due)", v)
	}
	if n, why := count("#models tr.model-row"), text("#models tr.model-row:nth-child(2) td:nth-child(6)"); n != 2 || why != "configured as stall-prone (--stall-prone)" {
		t.Errorf("%d model rows; the Xeon's why reads %q", n, why)
	}
	attrs, err := chromedp.Run(ctx, chromedp.AttributesAll(chromedp.CSSAll("figure.trend")))
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range attrs {
		if a["data-metric"] == "" {
			t.Errorf("a chart names no metric: %v", a)
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("taking the screenshot: %v", err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.CSS("#repositories"))); err != nil {
		t.Fatalf("rendering the index: %v", err)
	}
	if n := count("#repositories tr.repo-row"); n != 1 {
		t.Errorf("the index lists %d repositories, want 1", n)
	}

	golden := filepath.Join("testdata", "page.png")
	got, err := png.DecodeConfig(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is no PNG: %v", err)
	}
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v: run go test -run TestPageInChromium -update to write it", err)
	}
	want, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", golden, err)
	}
	// Pixels vary with the fonts installed; the page's layout does not:
	// the same rows and charts give the same full-page size.
	if got.Width != want.Width || got.Height != want.Height {
		t.Errorf("the page renders %dx%d, %s is %dx%d: the layout changed (look at both; -update to accept)",
			got.Width, got.Height, golden, want.Width, want.Height)
	}
	fmt.Fprintf(os.Stderr, "page screenshot %dx%d\n", got.Width, got.Height)
}

// TestPageShowsReRunsAndPlans: a re-run's row says its run attempt, and a
// second plan's metrics are trends of their own, named after the plan.
func TestPageShowsReRunsAndPlans(t *testing.T) {
	svc := verdict.New(dbtest.Open(t, "sqlite"), verdict.Config{})
	rep, err := json.Marshal(reporttest.Pass())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		runAttempt int
		plan       string
	}{{1, ""}, {2, ""}, {1, "search"}} {
		exit := 0
		_, err := svc.Ingest(context.Background(), verdict.Submission{Facts: verdict.Facts{Repository: "acme/api", Event: "push",
			HeadSHA: sha(0x77), RunID: 7, RunAttempt: f.runAttempt, Plan: f.plan, Attempt: 1, CPUModel: "AMD EPYC 7763", ExitCode: &exit}, Report: rep})
		if err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.Options{}))
	t.Cleanup(srv.Close)
	resp, err := srv.Client().Get(srv.URL + "/r/acme/api")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b bytes.Buffer
	b.ReadFrom(resp.Body)
	metric := reporttest.Pass().Verdict.Metrics[0].ID
	for _, want := range []string{"7 (run attempt 2)", "(search)", "search: " + metric} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("the page lacks %q", want)
		}
	}
}
