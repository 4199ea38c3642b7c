package replay

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A tool reporting on the run itself is compared by its call, not its
// result; any other tool's result is compared.
func TestResultsAboutTheRunNotCompared(t *testing.T) {
	stats := func(calls int) Action {
		return recordAction(time.Time{}, "tool_call", "tools.stats",
			[]byte(fmt.Sprintf(`{"caller":"llm","params":{},"ok":true,"result":{"value":{"fan.off":{"calls":%d}}}}`, calls)))
	}
	if a, b := stats(1), stats(2); !a.same(&b) {
		t.Fatalf("tools.stats compared by its result: %s / %s", a, b)
	}
	fan := func(duty float64) Action {
		return recordAction(time.Time{}, "tool_call", "fan.set", []byte(fmt.Sprintf(`{"caller":"llm","params":{},"ok":true,"result":{"value":{"duty":%g}}}`, duty)))
	}
	if a, b := fan(0.5), fan(0.6); a.same(&b) {
		t.Fatalf("fan.set's result not compared: %s / %s", a, b)
	}
}

// stepCall is a tool_call record as the journal writes it: of a cycle's
// plan step group when group > 0, of no cycle when cycle is 0.
func stepCall(tool string, on bool, cycle, group int) Action {
	return recordAction(time.Time{}, "tool_call", tool, []byte(fmt.Sprintf(
		`{"caller":"reflex","cycle":%d,"step_group":%d,"params":{"on":%t},"ok":true,"result":{"value":"done"},"duration_ms":0.2}`, cycle, group, on)))
}

// The calls of one cycle's parallel steps compare in any order (which
// ended first was a race); any other difference in them, or a call out of
// its group, or calls without a group (recorded before calls carried it),
// still diverge, naming both sides.
func TestStepGroupComparedInAnyOrder(t *testing.T) {
	before, after := stepCall("siren.set", true, 0, 0), stepCall("siren.set", false, 9, 0)
	a, b := stepCall("headlight.set", true, 5, 1), stepCall("pump.set", true, 5, 1)
	if d, _, _ := compare([]Action{before, a, b, after}, []Action{before, b, a, after}); d != nil {
		t.Fatalf("the group recorded A,B and replayed B,A diverged at #%d: %s / %s", d.Index+1, d.Want, d.Got)
	}
	offB := stepCall("pump.set", false, 5, 1)
	loneB, loneA := stepCall("pump.set", true, 5, 0), stepCall("headlight.set", true, 5, 0)
	c := stepCall("fan.set", true, 5, 0)
	for _, tc := range []struct {
		name      string
		want, got []Action
		index     int
		recorded  string
		replayed  string
	}{
		{"a parameter within the group", []Action{before, a, b, after}, []Action{before, offB, a, after}, 2,
			"pump.set: caller=reflex params={\"on\":true}", "pump.set: caller=reflex params={\"on\":false}"},
		{"a call of the group after the next step", []Action{before, a, b, c}, []Action{before, a, c, b}, 2,
			"pump.set", "fan.set"},
		{"one call more in the group", []Action{before, a, b, after}, []Action{before, b, a, a, after}, 3,
			"siren.set", "headlight.set"},
		{"calls recorded without their group", []Action{loneA, loneB}, []Action{loneB, loneA}, 0,
			"headlight.set", "pump.set"},
	} {
		d, _, _ := compare(tc.want, tc.got)
		if d == nil || d.Index != tc.index || d.Want == nil || d.Got == nil {
			t.Errorf("%s: divergence %+v, want one at tool call #%d", tc.name, d, tc.index+1)
			continue
		}
		var out strings.Builder
		(&Report{Divergence: d, Counts: map[string][2]int{}}).Print(&out)
		if !strings.Contains(out.String(), "- recorded  tool_call "+tc.recorded) || !strings.Contains(out.String(), "+ replayed  tool_call "+tc.replayed) {
			t.Errorf("%s: report does not name both sides:\n%s", tc.name, out.String())
		}
	}
}
