package mic

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/agent/agenttest"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// With the agent busy in a slow Normal-priority job, "hey robot" cancels
// the job at once (wake_word is High); the command spoken after it is
// transcribed and reaches the agent as a text command, which runs.
func TestWakeWordPreemptsABusyAgent(t *testing.T) {
	headlight, lit := agenttest.Probe("headlight.set",
		`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`)
	// The spoken command's cycle turns it into a tool call, as the local
	// matcher or the LLM engine would.
	dec, seen := agenttest.Decider(func(p agent.Perception) (agent.Decision, error) {
		if p.Command != nil && strings.Contains(p.Command.Text, "headlight") {
			return agent.Decision{Path: "local", Caller: p.Command.Caller,
				Steps: []agent.Step{{ID: "1", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}}}, nil
		}
		return agent.Decision{}, agent.ErrNoDecision
	}, EventWakeWord, EventVoiceCommand)
	busy := agenttest.StartBusy(t, worldmodel.New(worldmodel.Config{}), dec, headlight)

	srv := startWyoming(t, &wyomingtest.Server{Transcribe: hearHeadlight})
	// In real time: three seconds of a quiet room, "hey robot", a pause,
	// "turn on the headlight".
	wav := sceneWAV(t, 7*time.Second, [][]int16{speech(t, "pos/enrolled_b.wav"), speech(t, "neg/turn_on_the_headlight.wav")},
		[]time.Duration{3 * time.Second, 4 * time.Second})
	m := voiceSensor(t, wav, true, "wyoming: "+srv.Addr())
	sensortest.Run(t, m, busy.Sink())
	out := busy.Preempted(t, "mic/wake_word")
	// The next cycle is about the wake word; the one after carries the
	// spoken command as text.
	var wake, cmd agent.Perception
	for cmd.Command == nil {
		select {
		case p := <-seen:
			if p.Event.Kind == EventWakeWord {
				wake = p
			} else {
				cmd = p
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no cycle for the voice command")
		}
	}
	if wake.Cycle <= out.Cycle || wake.Event.Priority != worldmodel.High || wake.Event.Data["name"] != "hey_robot" {
		t.Fatalf("wake cycle %d (job was %d): %+v", wake.Cycle, out.Cycle, wake.Event)
	}
	if cmd.Command.Text != "turn on the headlight" || cmd.Command.Caller != "voice" || cmd.Cycle <= wake.Cycle {
		t.Fatalf("command cycle %d: %+v", cmd.Cycle, cmd.Command)
	}
	select {
	case p := <-lit:
		if string(p) != `{"on":true}` {
			t.Fatalf("headlight.set params %s", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the spoken command did not run")
	}
}
