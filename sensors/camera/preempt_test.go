package camera

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/agent/agenttest"
	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// With the agent busy in a slow Normal-priority step, a person walking into
// the camera's view cancels that step, and the next cycle is about the
// motion: it carries the event (boxes, area) and sees motion in the world
// summary.
func TestMotionStartPreemptsABusyAgent(t *testing.T) {
	world := worldmodel.New(worldmodel.Config{Capacities: map[string]int{"door.snapshot": 2}})
	look, looked := agenttest.Probe("probe.look", "")
	// The motion's cycle turns to look.
	dec, seen := agenttest.Decider(func(agent.Perception) (agent.Decision, error) {
		return agent.Decision{Path: "reflex", Caller: "reflex", Steps: []agent.Step{{ID: "1", Tool: "probe.look"}}}, nil
	}, EventMotionStart)
	busy := agenttest.StartBusy(t, world, dec, look)

	// A camera replaying, in real time, a doorway where someone walks in
	// after two seconds.
	door := mjpegClip(t, "door.mjpeg", 80, camsim.Config{Width: 160, Height: 120, Seed: 5, Noise: 3,
		Objects: []camsim.Object{{W: 30, H: 50, Y: 40, Speed: 6, Start: 40, Level: 200}}})
	cfg := sensortest.Board(t, "sim", `
- name: door
  kind: camera
  options:
    source: file
    path: `+door+`
    fps: 20
    pace: true
`)
	sensortest.Start(t, cfg, busy.Sink())
	out := busy.Preempted(t, "door/motion_start")
	var p agent.Perception
	select {
	case p = <-seen:
	case <-time.After(5 * time.Second):
		t.Fatal("no cycle for the motion event")
	}
	if p.Cycle <= out.Cycle || p.Trigger != "event" || p.Event.Priority != worldmodel.High || p.Event.Source != "door" {
		t.Fatalf("next cycle %d (slow job was %d): trigger %s, event %+v", p.Cycle, out.Cycle, p.Trigger, p.Event)
	}
	if boxes, _ := p.Event.Data["boxes"].([][4]int); len(boxes) == 0 {
		t.Errorf("motion event without boxes: %v", p.Event.Data)
	}
	if !strings.Contains(p.Summary, "door.motion = 1") {
		t.Errorf("the world summary does not show the motion:\n%s", p.Summary)
	}
	select {
	case <-looked:
	case <-time.After(5 * time.Second):
		t.Fatal("the motion cycle's step did not run")
	}
	if snap, ok := world.Latest("door.motion_snapshot"); !ok || snap.Blob == nil || snap.Blob.MIME != "image/jpeg" {
		t.Errorf("no snapshot of the motion start in the world model")
	}
}
