// Package browsertest runs a real headless Chromium (through chromedp) for
// the dashboard's browser tests, and skips a test, saying why, on a machine
// without one. Nothing here stands in for the browser: the page runs as it
// does for a user.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Chromium finds the browser: $EDGEAGENT_CHROMIUM, or Debian's chromium;
// without one the test is skipped.
func Chromium(t testing.TB) string {
	if p := os.Getenv("EDGEAGENT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium on this machine (apt-get install chromium): the dashboard's browser test is skipped")
	return ""
}

// New starts a headless Chromium with a fresh profile and a window of
// width × height, for at most timeout; it ends with the test.
//
// Chromium runs in a process group of its own, and the profile is removed
// once the whole group is gone: the browser's own exit (which chromedp
// waits for) does not end its child processes, and one still writing in
// the profile made t.TempDir's removal fail the test ("directory not
// empty", TestBrowserCollapsedRepeats in a suite run).
func New(t testing.TB, width, height int, timeout time.Duration) context.Context {
	profile, err := os.MkdirTemp("", "browsertest-")
	if err != nil {
		t.Fatal(err)
	}
	var browser atomic.Pointer[exec.Cmd]
	group := chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
		ownGroup(cmd)
		browser.Store(cmd)
	})
	opts := append(chromedp.DefaultExecAllocatorOptions[:], group,
		chromedp.ExecPath(Chromium(t)), chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(profile), chromedp.WindowSize(width, height))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelT()
		cancelC()
		cancelA()
		if cmd := browser.Load(); cmd != nil && cmd.Process != nil {
			endGroup(t, cmd.Process.Pid)
		}
		if err := os.RemoveAll(profile); err != nil {
			t.Errorf("chromium's profile: %v", err)
		}
	})
	return ctx
}

// FailOnPageErrors fails the test, when it ends, if the page threw an
// uncaught exception or logged a script or CSP error (a network error, such
// as a connection lost while the agent restarts, is fine).
func FailOnPageErrors(t testing.TB, ctx context.Context) {
	var (
		mu   sync.Mutex
		errs []string
	)
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			errs = append(errs, ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError && ev.Entry.Source != cdplog.SourceNetwork {
				errs = append(errs, string(ev.Entry.Source)+": "+ev.Entry.Text)
			}
		}
	})
	if err := chromedp.Run(ctx, cdplog.Enable()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) > 0 {
			t.Errorf("the page had errors:\n%s", strings.Join(errs, "\n"))
		}
	})
}

// WaitJS polls a JavaScript condition until it is true, failing the test
// (named by what) after timeout.
func WaitJS(t testing.TB, ctx context.Context, what, expr string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate("!!("+expr+")", &ok)); err != nil {
			last = err.Error()
		} else if ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: not within %v (%s)", what, timeout, last)
}

// Eval evaluates a JavaScript expression.
func Eval[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	var v T
	if err := chromedp.Run(ctx, chromedp.Evaluate(expr, &v)); err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}
