// Package browser drives Debian's headless Chromium from Go (chromedp)
// for the tests and benchmarks of the HTML pages: a browser with the
// flags a closed network and root need, and a page loaded from a file
// with what it asked for and the dialogs it opened.
package browser

import (
	"context"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Chromium is Debian's Chromium, which make testdeps installs.
const Chromium = "/usr/bin/chromium"

// Start starts a headless Chromium for tb with a fresh profile; it ends
// with tb. Without Chromium, tb fails: the HTML tests never skip.
func Start(tb testing.TB) context.Context {
	tb.Helper()
	if _, err := os.Stat(Chromium); err != nil {
		tb.Fatalf("%s: %v: the HTML tests need Debian's chromium (make testdeps installs it)", Chromium, err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(Chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(tb.TempDir()), chromedp.WindowSize(1280, 1024))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	tb.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// Tab is a page loaded in its own tab.
type Tab struct {
	Ctx context.Context
	URL string
	mu  sync.Mutex
	// requests are the URLs the page asked for; dialogs, how many
	// dialogs it opened.
	requests []string
	dialogs  int
}

// FileURL is the file: URL of a path.
func FileURL(path string) string { return (&url.URL{Scheme: "file", Path: path}).String() }

// Open loads the file path in a new tab of the browser ctx, listening to
// what it asks for; cancel closes the tab.
func Open(ctx context.Context, path string) (tab *Tab, cancel context.CancelFunc, err error) {
	t := &Tab{URL: FileURL(path)}
	t.Ctx, cancel = chromedp.NewContext(ctx)
	if err := chromedp.Listen(t.Ctx, func(ev any) {
		t.mu.Lock()
		defer t.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			t.requests = append(t.requests, e.Request.URL)
		case *page.EventJavascriptDialogOpening:
			t.dialogs++
		}
	}); err != nil {
		cancel()
		return nil, nil, err
	}
	if err := chromedp.Do(t.Ctx, chromedp.Navigate(t.URL)); err != nil {
		cancel()
		return nil, nil, err
	}
	return t, cancel, nil
}

// Requests are the URLs the page asked for, and how many dialogs it
// opened, so far.
func (t *Tab) Requests() (urls []string, dialogs int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.requests...), t.dialogs
}

// Eval evaluates a JavaScript expression in the page.
func Eval[T any](t *Tab, expr string) (T, error) {
	return chromedp.Run(t.Ctx, chromedp.Evaluate[T](expr))
}

// Screenshot is a PNG of the whole page.
func (t *Tab) Screenshot() ([]byte, error) {
	return chromedp.Run(t.Ctx, chromedp.FullScreenshot(100))
}

// Dark has the page follow a system in dark mode (prefers-color-scheme).
func (t *Tab) Dark() error {
	_, err := chromedp.Call(t.Ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
	return err
}

// PDF prints the page, as a person's print to PDF does.
func (t *Tab) PDF() ([]byte, error) {
	r, err := chromedp.Call(t.Ctx, page.PrintToPDF, page.PrintToPDFParams{})
	if err != nil {
		return nil, err
	}
	return r.Data, nil
}
