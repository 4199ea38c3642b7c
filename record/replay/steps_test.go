package replay_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Two reflexes on one event are one plan of two steps that run at once:
// the recording marks their calls as one step group of the cycle, and the
// replay, whichever of them comes first then, is identical. (Which order a
// replay takes is a race, so the order itself is tested in diff_test.go.)
func TestParallelStepsReplay(t *testing.T) {
	n, file, stop := recordBoard(t, t.TempDir(), pumpBoard("steps", `reflexes:
  - {on: overheat, do: {tool: world.query, params: {source: env.temperature, latest: true}}}
  - {on: overheat, do: {tool: world.query, params: {source: env.humidity, latest: true}}}
`), "steps.mcap")
	n.Raise(worldmodel.Event{Kind: "overheat", Source: "env", Priority: worldmodel.High, Message: "temperature above 30"})
	for !slices.ContainsFunc(n.World.Events(0, worldmodel.Low, 1000), func(e worldmodel.Event) bool {
		return e.Kind == "decision" && strings.Contains(e.Message, "env/overheat via reflex")
	}) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	type call struct {
		Cycle uint64 `json:"cycle"`
		Group int    `json:"step_group"`
	}
	var calls []call
	if _, err := recording.Read(file, func(m recording.Msg) error {
		var r struct {
			Kind, Source string
			Data         call
		}
		if json.Unmarshal(m.Data, &r) == nil && r.Kind == "tool_call" {
			calls = append(calls, r.Data)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(calls) != 2 || calls[0].Cycle == 0 || calls[0].Group == 0 || calls[0] != calls[1] {
		t.Fatalf("want both reflexes' calls in one step group of their cycle, recorded %+v", calls)
	}
	for range 3 {
		if rep, out := replayed(t, file); rep.Diverged() || rep.Counts["tool_call"] != [2]int{2, 2} {
			t.Fatalf("want the two calls made again:\n%s", out)
		}
	}
}
