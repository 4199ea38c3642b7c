package layout

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// wallClock lists the packages that may read the wall clock or make
// timers themselves (DESIGN §9a). Everything else takes a clock.Clock, so
// that a replay, which drives a virtual clock, runs the same code the same
// way. Keep it short; each entry says why. An entry is a package (or
// pattern), or one file when the rest of its package takes a clock. Test
// files, and test-support packages (their name ends in "test", like
// periph's i2ctest), may use the real time: they are never part of a run.
var wallClock = []struct{ pkg, why string }{
	{"clock", "the time source itself"},
	{"cmd/...", "the CLI: a process's start, an operator's waits and timeouts; it hands the node the clock a run uses"},
	{"fleet", "the operator's side of a fleet, a command-line client: it waits for robots' answers on the wall clock, never inside a run"},
	{"record/replay", "drives the virtual clock: paces it against the wall clock (--speed) and bounds how long the agent may take to settle"},
	{"train/...", "workstation tools, never part of a run: a progress bar's ETA and how long training took, for the report"},
	{"sensors/gpio/gpiosim", "simulated GPIO hardware: its lines change on the wall clock as a device's do, to the microsecond for an HC-SR04's echo"},
	{"sensors/gpio/hcsr04/ranger.go", "the HC-SR04's echo width is the measurement: polled to the microsecond on the CPU's clock, as a hardware timer counts"},
}

// wallDeadlines lists the files outside wallClock that may put a
// wall-clock deadline on a context (context.WithTimeout, WithDeadline):
// each bounds a wait for something outside the run, whose time is the
// wall's, like a socket's deadline. A deadline inside a run (an agent
// cycle, an LLM call, a command) is clock.WithTimeout on the run's clock,
// so that a replay ends it at the recorded moment.
var wallDeadlines = []struct{ file, why string }{
	{"node/node.go", "the shutdown grace: how long a stopping process waits for its parts (a replay's virtual clock stands still while its node stops)"},
	{"mqtt/plane.go", "draining the embedded broker while stopping, within the node's shutdown grace"},
	{"internal/mqttclient/mqttclient.go", "a wait for the broker's acknowledgement: network I/O"},
	{"tools/actuator/audit.go", "a wait for the audit store's disk sync: I/O"},
	{"sensors/mic/sensor.go", "a wait for the speech-to-text server (network I/O); a replay feeds the transcripts it recorded and never runs it"},
	{"eval/run.go", "an evaluation case's time limit: the operator's, on a workstation"},
}

// contextDeadlines are the context package's functions that start a
// wall-clock timer.
var contextDeadlines = map[string]bool{"WithTimeout": true, "WithDeadline": true, "WithTimeoutCause": true, "WithDeadlineCause": true}

// timeCalls are the time package's functions that read the wall clock or
// make a timer.
var timeCalls = map[string]bool{
	"Now": true, "Since": true, "Until": true, "After": true, "AfterFunc": true,
	"NewTimer": true, "NewTicker": true, "Tick": true, "Sleep": true,
}

func TestClockRule(t *testing.T) {
	used := map[string]bool{}
	eachSource(t, func(p, pkg string) {
		if strings.HasSuffix(pkg, "test") || strings.HasPrefix(pkg, "scripts/") {
			return
		}
		file := path.Join(pkg, filepath.Base(p))
		for _, c := range wallClockCalls(t, p) {
			if entry, ok := wallClockAllowed(pkg, file); ok {
				used[entry] = true
				continue
			}
			if strings.HasPrefix(c.name, "context.") {
				if wallDeadlineAllowed(file) {
					used[file] = true
					continue
				}
				t.Errorf("%s: calls %s, a deadline on the wall clock: use clock.WithTimeout with the run's clock, or add %s to wallDeadlines in %s with the reason",
					strings.TrimPrefix(c.pos.String(), "../../"), c.name, file, "internal/layout/clock_test.go")
				continue
			}
			t.Errorf("%s: calls time.%s: take the time from a clock.Clock (package clock), or add %s to wallClock in %s with the reason",
				strings.TrimPrefix(c.pos.String(), "../../"), c.name, pkg, "internal/layout/clock_test.go")
		}
	})
	for _, w := range wallClock {
		if !used[w.pkg] {
			t.Errorf("wallClock lists %s, which no longer reads the wall clock: remove it", w.pkg)
		}
	}
	for _, w := range wallDeadlines {
		if !used[w.file] {
			t.Errorf("wallDeadlines lists %s, which no longer makes a wall-clock deadline: remove it", w.file)
		}
	}
}

func wallDeadlineAllowed(file string) bool {
	for _, w := range wallDeadlines {
		if w.file == file {
			return true
		}
	}
	return false
}

func wallClockAllowed(pkg, file string) (string, bool) {
	for _, w := range wallClock {
		if w.pkg == file || match(w.pkg, pkg) {
			return w.pkg, true
		}
	}
	return "", false
}

type timeCall struct {
	pos  token.Position
	name string
}

// wallClockCalls finds the file's calls of timeCalls, except a time.Now
// inside a Set…Deadline call's arguments: a socket's deadline is the
// kernel's, on the wall clock whatever clock the caller runs on; and its
// calls of contextDeadlines, named "context.<func>".
func wallClockCalls(t *testing.T, path string) []timeCall {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	name, ctxName := "", ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		local := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			local = imp.Name.Name
		}
		switch p {
		case "time":
			name = local
		case "context":
			ctxName = local
		}
	}
	if name == "" && ctxName == "" {
		return nil
	}
	// A call, or a reference such as a "now: time.Now" default: both read
	// the wall clock.
	timeFunc := func(n ast.Node) string {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return ""
		}
		x, ok := sel.X.(*ast.Ident)
		switch {
		case !ok:
		case name != "" && x.Name == name && timeCalls[sel.Sel.Name]:
			return sel.Sel.Name
		case ctxName != "" && x.Name == ctxName && contextDeadlines[sel.Sel.Name]:
			return "context." + sel.Sel.Name
		}
		return ""
	}
	kernel := map[ast.Node]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Set") && strings.HasSuffix(sel.Sel.Name, "Deadline") {
			for _, a := range call.Args {
				ast.Inspect(a, func(m ast.Node) bool {
					if timeFunc(m) == "Now" {
						kernel[m] = true
					}
					return true
				})
			}
		}
		return true
	})
	var calls []timeCall
	ast.Inspect(f, func(n ast.Node) bool {
		if fn := timeFunc(n); fn != "" && !kernel[n] {
			calls = append(calls, timeCall{fset.Position(n.Pos()), fn})
		}
		return true
	})
	return calls
}

// The finder itself: it sees renamed imports, every listed function and a
// reference to one, lets a socket deadline through, and finds a context's
// wall-clock deadline.
func TestWallClockCallsFinds(t *testing.T) {
	src := `package p

import (
	"context"
	"net"
	tm "time"
)

type other struct{}

func (other) Now() int { return 0 }

func f(c net.Conn, time other) {
	_ = tm.Now()
	<-tm.After(tm.Second)
	_ = c.SetWriteDeadline(tm.Now().Add(tm.Second))
	_ = time.Now()
	tm.Sleep(0)
	now := tm.Now
	_ = now
	ctx, cancel := context.WithTimeout(context.Background(), tm.Second)
	_, _ = ctx, cancel
}
`
	path := filepath.Join(t.TempDir(), "p.go")
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range wallClockCalls(t, path) {
		got = append(got, fmt.Sprintf("%d:%s", c.pos.Line, c.name))
	}
	if want := "14:Now 15:After 18:Sleep 19:Now 21:context.WithTimeout"; strings.Join(got, " ") != want {
		t.Fatalf("found %v, want %s", got, want)
	}
}
