package mic

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/agent/agenttest"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit/kittest"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// voiceDecider turns the spoken command into a tool call, as the local
// matcher or the LLM engine would, and remembers what it perceived.
type voiceDecider struct{ seen chan agent.Perception }

func (d voiceDecider) Decide(_ context.Context, p agent.Perception) (agent.Decision, error) {
	if p.Event == nil || (p.Event.Kind != EventWakeWord && p.Event.Kind != EventVoiceCommand) {
		return agent.Decision{}, agent.ErrNoDecision
	}
	d.seen <- p
	if p.Command != nil && strings.Contains(p.Command.Text, "headlight") {
		return agent.Decision{Path: "local", Caller: p.Command.Caller,
			Steps: []agent.Step{{ID: "1", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}}}, nil
	}
	return agent.Decision{}, agent.ErrNoDecision
}

// With the agent busy in a slow Normal-priority job, "hey robot" cancels
// the job at once (wake_word is High); the command spoken after it is
// transcribed and reaches the agent as a text command, which runs.
func TestWakeWordPreemptsABusyAgent(t *testing.T) {
	lit := make(chan string, 1)
	dec := voiceDecider{seen: make(chan agent.Perception, 8)}
	busy := agenttest.StartBusy(t, worldmodel.New(worldmodel.Config{}), dec,
		tools.Func(tools.Spec{Name: "headlight.set", Description: "switch the headlight", Permission: "actuate",
			Params: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`)},
			func(_ context.Context, p json.RawMessage) (tools.Result, error) {
				lit <- string(p)
				return tools.Result{Value: "on"}, nil
			}))

	srv := startWyoming(t, &wyomingtest.Server{Transcribe: hearHeadlight})
	// In real time: three seconds of a quiet room, "hey robot", a pause,
	// "turn on the headlight".
	wav := sceneWAV(t, 7*time.Second, [][]int16{speech(t, "pos/enrolled_b.wav"), speech(t, "neg/turn_on_the_headlight.wav")},
		[]time.Duration{3 * time.Second, 4 * time.Second})
	m := voiceSensor(t, wav, true, "wyoming: "+srv.Addr())
	kittest.Run(t, m, busy.Sink())
	out := busy.Preempted(t, "mic/wake_word")
	// The next cycle is about the wake word; the one after carries the
	// spoken command as text.
	var wake, cmd agent.Perception
	for cmd.Command == nil {
		select {
		case p := <-dec.seen:
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
		if p != `{"on":true}` {
			t.Fatalf("headlight.set params %s", p)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the spoken command did not run")
	}
}
