package experiment

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/perfgate/perfgate/internal/testtier"
)

// TestHTMLReportInChromium opens the HTML report in headless Chromium,
// checks what the page shows, and keeps a screenshot
// (testdata/experiment/report.png, rewritten with -update).
func TestHTMLReportInChromium(t *testing.T) {
	testtier.Heavy(t, testtier.Chromium)
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not installed; apt-get install -y chromium")
	}
	page := filepath.Join(t.TempDir(), "report.html")
	if err := WriteHTMLFile(page, onSale(t)); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1400), chromedp.Flag("disable-gpu", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(cancelT)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+page)); err != nil {
		t.Fatalf("chromium: opening the report: %v", err)
	}
	verdict, err := chromedp.Run(ctx, chromedp.Text(".verdict"))
	if err != nil {
		t.Fatalf("chromium: reading the verdict: %v", err)
	}
	knee, err := chromedp.Run(ctx, chromedp.Text("tr.knee td"))
	if err != nil {
		t.Fatalf("chromium: reading the knee's row: %v", err)
	}
	charts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("svg polyline").length`))
	if err != nil {
		t.Fatalf("chromium: counting the charts: %v", err)
	}
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	if !strings.Contains(verdict, "answered (exit 0)") || knee != "ramp 2/3" || charts < 6 {
		t.Errorf("page shows verdict %q, knee row %q, %d chart lines", verdict, knee, charts)
	}
	path := filepath.Join("..", "..", "testdata", "experiment", "report.png")
	if *update {
		if err := os.WriteFile(path, shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if len(shot) < 10000 {
		t.Errorf("screenshot of %d bytes: the page did not render", len(shot))
	}
}
