package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/edgeagent/edgeagent/internal/browsertest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The page in a real headless Chromium, against a running node: the lists
// in the stream's order, the e-stop after a reload, a failure's repeats as
// one line, and the snapshot page a headless screenshot can finish.

// openPage starts a node of testBoard (loopback, no login) and the
// browser, and opens the page once the node holds what prepare noted.
func openPage(t *testing.T, prepare func(*node.Node)) (*node.Node, context.Context, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test: not in -short")
	}
	browsertest.Chromium(t)
	n, url := start(t, "")
	if prepare != nil {
		prepare(n)
	}
	ctx := browsertest.New(t, 1280, 900, time.Minute)
	browsertest.FailOnPageErrors(t, ctx)
	loadPage(t, ctx, url+"/")
	return n, ctx, url
}

// loadPage navigates (or reloads) and waits until the page has drawn
// /api/state.
func loadPage(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Navigate(url), chromedp.WaitVisible(`#main`)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, ctx, "the page's state", `window.dashboard && window.dashboard.state`, 10*time.Second)
}

func showTab(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if err := chromedp.Run(ctx, chromedp.Click(`#tabs [data-tab="`+name+`"]`), chromedp.WaitVisible(`#tab-`+name)); err != nil {
		t.Fatalf("tab %s: %v", name, err)
	}
}

// line is a list line as the page shows it.
type line struct {
	Seq  uint64 `json:"seq"`
	Kind string `json:"kind"`
	Rep  string `json:"rep"`
	Text string `json:"text"`
}

func lines(t *testing.T, ctx context.Context, list string) []line {
	t.Helper()
	return browsertest.Eval[[]line](t, ctx, `[...document.querySelectorAll('`+list+` > li')].map(li =>
	  ({seq: Number(li.dataset.seq), kind: li.dataset.kind, rep: li.dataset.rep || "", text: li.textContent}))`)
}

// newestFirst fails unless the list's lines are in the stream's order,
// newest first.
func newestFirst(t *testing.T, list string, ls []line) {
	t.Helper()
	for i := 1; i < len(ls); i++ {
		if ls[i].Seq >= ls[i-1].Seq {
			t.Fatalf("%s: line %d (seq %d, %s) after seq %d: not in the stream's order\n%+v", list, i, ls[i].Seq, ls[i].Kind, ls[i-1].Seq, ls)
		}
	}
}

// exchange notes an LLM exchange as the engine journals it (this board has
// no model); errText "" is a success.
func exchange(n *node.Node, purpose, errText string) {
	d, _ := json.Marshal(map[string]any{"purpose": purpose, "answer": "", "error": errText,
		"usage": map[string]any{"model": "tiny", "prompt_tokens": 10, "eval_tokens": 1}, "duration_ms": 1.5})
	n.World.Note(worldmodel.Record{Kind: "llm", Source: "llm", Data: d})
}

func note(n *node.Node, i int) {
	n.World.Record(worldmodel.Event{Kind: "test_event", Source: "test", Priority: worldmodel.Normal, Message: fmt.Sprintf("note %d", i)})
}

// ours keeps the lines the test noted (the sim camera adds motion events
// of its own), as "note i" and "exchange i".
func ours(ls []line) []string {
	var out []string
	for _, l := range ls {
		for _, w := range []string{"note ", "exchange "} {
			if i := strings.Index(l.Text, w); i >= 0 && (l.Kind == "test_event" || l.Kind == "llm") {
				out = append(out, strings.Fields(l.Text[i:])[0]+" "+strings.TrimSuffix(strings.Fields(l.Text[i:])[1], ":"))
			}
		}
	}
	return out
}

// Events and LLM exchanges are one list in the stream's order, as loaded
// and as they arrive (the page used to put every exchange after the events).
func TestBrowserListInStreamOrder(t *testing.T) {
	n, ctx, _ := openPage(t, func(n *node.Node) {
		for i := range 5 {
			note(n, i)
			exchange(n, fmt.Sprint("exchange ", i), "")
		}
	})
	// Without the state records replayed, healthy parts still say nothing.
	if note := browsertest.Eval[string](t, ctx, `document.querySelector('#sensor-note').textContent`); note != "" {
		t.Fatalf("a healthy board's sensor note: %q", note)
	}
	recent := lines(t, ctx, "#recent")
	newestFirst(t, "#recent", recent)
	if got := ours(recent); len(got) < 4 || strings.Join(got[:4], ",") != "exchange 4,note 4,exchange 3,note 3" {
		t.Fatalf("#recent: %v, want the newest exchange, then the newest event, and so on", got)
	}
	showTab(t, ctx, "events")
	loaded := lines(t, ctx, "#events")
	newestFirst(t, "#events", loaded)
	want := "exchange 4,note 4,exchange 3,note 3,exchange 2,note 2,exchange 1,note 1,exchange 0,note 0"
	if got := strings.Join(ours(loaded), ","); got != want {
		t.Fatalf("#events: %s\nwant     %s", got, want)
	}

	for i := 5; i < 8; i++ {
		exchange(n, fmt.Sprint("exchange ", i), "")
		note(n, i)
	}
	browsertest.WaitJS(t, ctx, "the live lines", `[...document.querySelectorAll('#events > li')].some(li => li.textContent.includes('note 7'))`, 10*time.Second)
	live := lines(t, ctx, "#events")
	newestFirst(t, "#events", live)
	if got := strings.Join(ours(live), ","); got != "note 7,exchange 7,note 6,exchange 6,note 5,exchange 5,"+want {
		t.Fatalf("#events after live lines: %s", got)
	}
}

// An e-stop stays on the page after a reload until it is reset, however
// many lines came after it.
func TestBrowserEStopVisibleAfterReload(t *testing.T) {
	n, ctx, url := openPage(t, nil)
	if err := chromedp.Run(ctx, chromedp.Click(`#estop`)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, ctx, "e-stop latched", `document.body.dataset.estop === 'latched'`, 10*time.Second)
	if h := n.World.Health()["estop"]; h != "latched" {
		t.Fatalf("the actuators' latch: %q", h)
	}
	for i := range 12 { // more than the Overview's latest lines
		note(n, i)
		exchange(n, fmt.Sprint("exchange ", i), "")
	}
	loadPage(t, ctx, url+"/")
	if kinds := lines(t, ctx, "#recent"); len(kinds) == 0 || strings.Contains(fmt.Sprint(kinds), "estop") {
		t.Fatalf("the test needs the e-stop out of the latest lines: %+v", kinds)
	}
	if !browsertest.Eval[bool](t, ctx, `document.body.dataset.estop === 'latched'`) {
		t.Fatal("after a reload the page does not show the latched e-stop")
	}
	banner := browsertest.Eval[string](t, ctx, `(() => { const b = document.querySelector('#estop-banner'); return b.checkVisibility() ? b.textContent : ''; })()`)
	if !strings.Contains(banner, "E-STOP LATCHED since") || !strings.Contains(banner, "by web") {
		t.Fatalf("the Overview's e-stop banner after a reload: %q", banner)
	}

	// Reset: gone, and still gone after a reload.
	browsertest.Eval[bool](t, ctx, `(() => { window.confirm = () => true; return true; })()`)
	if err := chromedp.Run(ctx, chromedp.Click(`#estop-reset`)); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitJS(t, ctx, "e-stop reset", `document.body.dataset.estop === 'ok' && !document.querySelector('#estop-banner').checkVisibility()`, 10*time.Second)
	loadPage(t, ctx, url+"/")
	if browsertest.Eval[bool](t, ctx, `document.body.dataset.estop !== 'ok' || document.querySelector('#estop-banner').checkVisibility()`) {
		t.Fatal("after the reset and a reload the page still shows an e-stop")
	}
}

// A failure repeated among other events (the LLM unreachable, every ~20 s
// without Ollama) is one line with a count and when it was last seen, as
// loaded and as it goes on; every other event keeps its line.
func TestBrowserCollapsedRepeats(t *testing.T) {
	n, ctx, url := openPage(t, func(n *node.Node) {
		for i := range 5 {
			exchange(n, "classify", fmt.Sprintf("llm unavailable: ollama at http://127.0.0.1:9: attempt %d", i))
			note(n, i)
		}
	})
	showTab(t, ctx, "events")
	check := func(when string, count int) {
		t.Helper()
		ls := lines(t, ctx, "#events")
		var reps []line
		events := 0
		for _, l := range ls {
			if l.Rep != "" {
				reps = append(reps, l)
			}
			if l.Kind == "test_event" {
				events++
			}
		}
		if len(reps) != 1 || !strings.Contains(reps[0].Text, fmt.Sprintf("×%d, last seen", count)) {
			t.Fatalf("%s: want one line ×%d, got %+v", when, count, reps)
		}
		if events < 5 {
			t.Fatalf("%s: %d test events listed, want every one", when, events)
		}
	}
	check("loaded", 5)

	exchange(n, "review", "llm unavailable: ollama at http://127.0.0.1:9: attempt 5")
	browsertest.WaitJS(t, ctx, "the repeat counted", `document.querySelector('#events > li[data-rep]')?.textContent.includes('×6')`, 10*time.Second)
	check("live", 6)
	if first := lines(t, ctx, "#events")[0]; first.Rep == "" {
		t.Fatalf("the repeated failure did not move to the top, where it was last seen: %+v", first)
	}
	loadPage(t, ctx, url+"/")
	showTab(t, ctx, "events")
	check("reloaded", 6)
}

// The README's screenshot command finishes on the snapshot page (?static=1)
// and writes a PNG: the live page's channel and camera stream never end,
// and chromium's virtual time does not run while a request is open.
func TestScreenshotCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("browser test: not in -short")
	}
	chromium := browsertest.Chromium(t)
	_, url := start(t, "")
	png := filepath.Join(t.TempDir(), "dashboard.png")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// As in the README, with a fresh profile.
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--window-size=1440,1000", "--virtual-time-budget=5000",
		"--screenshot="+png, url+"/?static=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chromium: %v (context: %v)\n%s", err, ctx.Err(), out)
	}
	b, err := os.ReadFile(png)
	if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatalf("no PNG: %v (%d bytes)", err, len(b))
	}
}

// A command a fleet or a group sent is marked in the tool calls' list and
// the audit (caller mqtt, then the broadcast), and the calls' caller filter
// finds it by the broadcast's kind or name; the robot's own have no mark.
func TestBrowserCallsShowFleetMarks(t *testing.T) {
	_, ctx, _ := openPage(t, func(n *node.Node) {
		for _, via := range []*tools.Via{nil, {Kind: tools.ViaGroup, Name: "north", Topic: "edgeagent/group/north/cmd"},
			{Kind: tools.ViaFleet, Name: "yard", Topic: "edgeagent/fleet/yard/cmd"}} {
			if _, err := n.Tools.Invoke(context.Background(), tools.Call{Caller: "mqtt", Tool: "pan.set_angle", Params: []byte(`{"degrees":40}`), Via: via}); err != nil {
				t.Fatal(err)
			}
		}
	})
	showTab(t, ctx, "audit") // its audit query is a call too, as caller web
	rows := func() []string {
		return browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#calls tbody tr[data-caller="mqtt"]')].map(tr => tr.children[1].textContent + " | " + tr.children[1].title)`)
	}
	browsertest.WaitJS(t, ctx, "the calls listed", `document.querySelectorAll('#calls tbody tr[data-caller="mqtt"]').length === 3`, 10*time.Second)
	want := []string{"mqtt · fleet yard | sent to the fleet on edgeagent/fleet/yard/cmd", "mqtt · group north | sent to the group on edgeagent/group/north/cmd", "mqtt | "}
	if got := rows(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the calls' callers:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The audit of the physical actions says so too.
	browsertest.WaitJS(t, ctx, "the audit rows", `document.querySelectorAll('#audit tbody tr[data-caller="mqtt"]').length === 3`, 10*time.Second)
	audit := browsertest.Eval[[]string](t, ctx, `[...document.querySelectorAll('#audit tbody tr[data-caller="mqtt"]')].map(tr => tr.children[1].textContent)`)
	if slices.Sort(audit); strings.Join(audit, ",") != "mqtt,mqtt · fleet yard,mqtt · group north" {
		t.Errorf("the audit's callers: %q", audit)
	}
	for q, want := range map[string]string{"group": want[1], "yard": want[0], "mqtt": strings.Join(want, "\n")} {
		if err := chromedp.Run(ctx, chromedp.SetValue(`#calls-caller`, q), chromedp.Evaluate(`document.querySelector('#calls-caller').dispatchEvent(new Event('input'))`, nil)); err != nil {
			t.Fatal(err)
		}
		if got := rows(); strings.Join(got, "\n") != want {
			t.Errorf("filter %q: %q, want %q", q, got, want)
		}
	}
}
