package replay

import (
	"fmt"
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
