package mqtt

import (
	"encoding/json"
	"testing"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
	"github.com/edgeagent/edgeagent/tools"
)

// A command on the fleet's or a group's topic runs as caller mqtt, as one
// on the robot's own cmd topic, and its record in the stream says which
// broadcast it came by (tools.Via): the tool_call record of a tool call,
// the command record of a text command. The robot's own have no mark.
func TestFleetCommandsAreMarked(t *testing.T) {
	r := newRig(t, rigOpts{fleet: Fleet{Name: "yard", Groups: []string{"north", "south"}}, journal: true})
	r.start(t)
	tp := r.topics()
	root := r.cfg.FleetRoot()
	fleetCmd, south := fleetproto.FleetTopic(root, "yard", "cmd"), fleetproto.GroupCmd(root, "south")
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	for _, c := range []struct{ topic, payload string }{
		{tp.Cmd, `{"id":"own","tool":"headlight.set","params":{"on":true}}`},
		{fleetCmd, `{"id":"all","tool":"headlight.set","params":{"on":false}}`},
		{south, `{"id":"s1","tool":"counter.hit","params":{"id":"s1"}}`},
		{south, `{"id":"s2","text":"turn on the headlight"}`},
	} {
		p.send(t, c.topic, c.payload)
		if rep := decodeReply(t, p.next(t, tp.Reply)); rep.ID == nil || rep.Robot != "test-bot" {
			t.Fatalf("%s: reply %+v", c.topic, rep)
		}
	}
	marks := map[string]string{} // tool or text -> the record's caller and via
	for _, rec := range r.world.Records(0, 0) {
		var d struct {
			Caller string `json:"caller"`
			Text   string `json:"text"`
			Params struct{ On *bool }
			Via    *tools.Via `json:"via"`
		}
		if err := json.Unmarshal(rec.Data, &d); err != nil {
			t.Fatalf("%s record: %v", rec.Kind, err)
		}
		what := rec.Source
		switch {
		case rec.Kind == agent.RecordCommand:
			what = d.Text
		case rec.Kind != "tool_call":
			continue
		case d.Params.On != nil && *d.Params.On:
			what += " on"
		}
		b, _ := json.Marshal(d.Via)
		marks[what] = d.Caller + " " + string(b)
	}
	want := map[string]string{
		"headlight.set on":      `mqtt null`,
		"headlight.set":         `mqtt {"kind":"fleet","name":"yard","topic":"` + fleetCmd + `"}`,
		"counter.hit":           `mqtt {"kind":"group","name":"south","topic":"` + south + `"}`,
		"turn on the headlight": `mqtt {"kind":"group","name":"south","topic":"` + south + `"}`,
	}
	for k, v := range want {
		if marks[k] != v {
			t.Errorf("%s: recorded as %s, want %s", k, marks[k], v)
		}
	}
	if len(marks) != len(want) {
		t.Errorf("records %v, want %v", marks, want)
	}
}
