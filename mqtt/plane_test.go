package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/mqtt/pump"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestCommandRoundTrip(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#", tp.Status)
	if got := string(p.next(t, tp.Status).Payload()); got != "online" {
		t.Fatalf("status = %q", got)
	}
	p.send(t, tp.Cmd, `{"id":"c1","tool":"headlight.set","params":{"on":true}}`)
	rep := decodeReply(t, p.next(t, tp.Reply))
	if !rep.OK || *rep.ID != "c1" || !r.lamp.on.Load() {
		t.Fatalf("reply %+v, lamp on %v", rep, r.lamp.on.Load())
	}
	if res, _ := json.Marshal(rep.Result); string(res) != `{"value":{"on":true}}` {
		t.Fatalf("result %s", res)
	}
	if _, ok := r.lamp.callers.Load("mqtt"); !ok {
		t.Fatal("the tool did not see caller mqtt")
	}
	// reply_to, and the same tool by its short name.
	p.send(t, tp.Cmd, `{"id":"c2","tool":"set","params":{"on":false},"reply_to":"`+tp.Reply+`/me"}`)
	rep = decodeReply(t, p.next(t, tp.Reply+"/me"))
	if !rep.OK || *rep.ID != "c2" || r.lamp.on.Load() {
		t.Fatalf("reply_to: %+v", rep)
	}
	// Text without a decision engine: a clear error, nothing invoked.
	calls := r.lamp.calls.Load()
	p.send(t, tp.Cmd, `{"id":"t1","text":"turn on the headlight"}`)
	rep = decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || rep.Code != CodeFailed || !strings.Contains(rep.Error, "no decision engine") || r.lamp.calls.Load() != calls {
		t.Fatalf("text command: %+v", rep)
	}
	// The status component.
	st := r.plane.Status()
	b, _ := json.Marshal(st)
	for _, want := range []string{`"connected":true`, `"embedded_broker":true`, `"commands":3`, `"broker":"tcp://127.0.0.1:`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("status %s lacks %s", b, want)
		}
	}
	// A clean stop says "stopped" (retained).
	r.stop(t)
	// ("online" may have come twice: live, and retained on subscribing.)
	if m := p.nextMatching(t, tp.Status, func(m paho.Message) bool { return string(m.Payload()) != "online" }); string(m.Payload()) != "stopped" {
		t.Fatalf("status after stop = %q", m.Payload())
	}
}

// TestBadInput: every kind of bad input gets an error reply with the
// request's id (null when it has none), nothing is actuated, nothing
// crashes, and the plane keeps working.
func TestBadInput(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	big := `{"id":"big","tool":"headlight.set","params":{"on":true,"pad":"` + strings.Repeat("x", MaxPayload) + `"}}`
	null := "<null>"
	cases := []struct {
		name, payload, id, code, msg string
		topic                        string // reply topic; default tp.Reply
	}{
		{"malformed JSON", `{"id":"m1","tool":"headlight.set","params":{"on":tr`, "m1", CodeInvalid, "malformed JSON", ""},
		{"not JSON at all", `headlight on please`, null, CodeInvalid, "malformed JSON", ""},
		{"missing id", `{"tool":"headlight.set","params":{"on":true}}`, null, CodeInvalid, "missing id", ""},
		{"id of the wrong type", `{"id":7,"tool":"headlight.set","params":{"on":true}}`, null, CodeInvalid, "id must be a string", ""},
		{"unknown tool", `{"id":"u1","tool":"laser.fire"}`, "u1", tools.CodeNotFound, "no such tool", ""},
		{"internal tool", `{"id":"i1","tool":"world.query"}`, "i1", tools.CodeNotFound, "internal tool", ""},
		{"param of the wrong type", `{"id":"s1","tool":"headlight.set","params":{"on":"yes"}}`, "s1", CodeInvalid, "/on", ""},
		{"missing param", `{"id":"s2","tool":"headlight.set","params":{}}`, "s2", CodeInvalid, "on", ""},
		{"extra param", `{"id":"s3","tool":"headlight.set","params":{"on":true,"blink":1}}`, "s3", CodeInvalid, "blink", ""},
		{"params not an object", `{"id":"w1","tool":"headlight.set","params":[true]}`, "w1", CodeInvalid, "params must be a JSON object", ""},
		{"tool of the wrong type", `{"id":"w2","tool":["headlight.set"]}`, "w2", CodeInvalid, "tool must be a string", ""},
		{"unknown field", `{"id":"w3","tool":"headlight.set","params":{"on":true},"force":true}`, "w3", CodeInvalid, "unknown field", ""},
		{"duplicate key smuggles a tool", `{"id":"d1","tool":"world.query","tool":"headlight.set","params":{"on":true}}`, "d1", CodeInvalid, `duplicate key "tool"`, ""},
		{"duplicate key in params", `{"id":"d2","tool":"headlight.set","params":{"on":false,"on":true}}`, "d2", CodeInvalid, `duplicate key "on"`, ""},
		{"over 64 KiB", big, "big", CodeInvalid, "limit is 65536", ""},
		{"admin tool without admin", `{"id":"f1","tool":"estop.reset"}`, "f1", tools.CodeForbidden, "admin", ""},
		{"admin op without admin", `{"id":"f2","op":"disable","params":{"tool":"headlight.set"}}`, "f2", tools.CodeForbidden, "admin", ""},
		{"reply_to a control topic", `{"id":"r1","tool":"headlight.set","params":{"on":true},"reply_to":"` + tp.Cmd + `"}`, "r1", CodeInvalid, "reply_to", ""},
		{"bad reply_to reaches the good one", `{"id":"r2","reply_to":"` + tp.Reply + `/x","tool":7}`, "r2", CodeInvalid, "tool must be a string", tp.Reply + "/x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.send(t, tp.Cmd, tc.payload)
			topic := tp.Reply
			if tc.topic != "" {
				topic = tc.topic
			}
			rep := decodeReply(t, p.next(t, topic))
			id := null
			if rep.ID != nil {
				id = *rep.ID
			}
			if rep.OK || id != tc.id || rep.Code != tc.code || !strings.Contains(rep.Error, tc.msg) {
				t.Fatalf("reply %+v (id %s); want id %s, code %s, error ~%q", rep, id, tc.id, tc.code, tc.msg)
			}
			if strings.HasPrefix(tc.name, "param") && !strings.Contains(tc.name, "object") && len(rep.Paths) == 0 {
				t.Fatalf("invalid params without paths: %+v", rep)
			}
		})
	}
	if n := r.lamp.calls.Load(); n != 0 {
		t.Fatalf("bad input actuated %d times", n)
	}
	if got := r.plane.badInput.Load(); got != 12 {
		t.Errorf("bad_input = %d", got)
	}

	// Commands during an e-stop are refused, with their id.
	p.send(t, tp.Estop, "STOP")
	waittest.For(t, "e-stop event", func() bool { return len(r.world.Events(0, worldmodel.Critical, 0)) == 1 })
	p.send(t, tp.Cmd, `{"id":"e1","tool":"headlight.set","params":{"on":true}}`)
	rep := decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || *rep.ID != "e1" || rep.Code != tools.CodeRefused || !strings.Contains(rep.Error, "e-stop") {
		t.Fatalf("command during e-stop: %+v", rep)
	}
	if n := r.lamp.calls.Load(); n != 0 {
		t.Fatalf("actuated during e-stop")
	}
}

// TestRetainedInputIgnored: retained messages on cmd and estop are replayed
// to every new subscription; they are history, not requests.
func TestRetainedInputIgnored(t *testing.T) {
	b := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	tp := NewTopics("edgeagent/test-bot/", "test-bot", "homeassistant")
	p := dialPeer(t, b.URL(), "old-client", tp.Reply+"/#")
	for topic, payload := range map[string]string{tp.Cmd: `{"id":"ret","tool":"headlight.set","params":{"on":true}}`, tp.Estop: "STOP"} {
		if err := mqttclient.Wait(context.Background(), p.c.Publish(topic, 1, true, payload), time.Second); err != nil {
			t.Fatal(err)
		}
	}
	r := newRig(t, rigOpts{broker: b.URL()})
	r.start(t)
	p.send(t, tp.Cmd, `{"id":"live","tool":"headlight.set","params":{"on":false}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); *rep.ID != "live" || !rep.OK {
		t.Fatalf("first reply %+v: the retained command was answered", rep)
	}
	if r.lamp.calls.Load() != 1 || len(r.world.Events(0, worldmodel.Critical, 0)) != 0 {
		t.Fatal("retained input was acted on")
	}
}

func TestEstopOverMQTT(t *testing.T) {
	r := newRig(t, rigOpts{})
	got := make(chan worldmodel.Event, 4)
	r.host.onCritical(func(e worldmodel.Event) { got <- e })
	r.start(t)
	tp := r.topics()
	admin := dialPeer(t, r.url(), "admin", tp.Reply)
	// Anything but an empty payload or a well-formed reset triggers; a
	// reset with a duplicate key is not a well-formed reset.
	for _, payload := range []string{"PRESS", `{"reset":false}`, "\xff\xfe", `{"reset":true,"reset":false}`} {
		admin.send(t, tp.Estop, payload)
		select {
		case e := <-got:
			if e.Kind != "estop" || e.Source != "mqtt" || e.Priority != worldmodel.Critical {
				t.Fatalf("event %+v", e)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("payload %q did not trigger the e-stop", payload)
		}
	}
	// Reset needs admin: on the estop topic the mqtt caller's grants apply.
	admin.send(t, tp.Estop, `{"reset":true,"id":"rs1"}`)
	rep := decodeReply(t, admin.next(t, tp.Reply))
	if rep.OK || rep.Code != tools.CodeForbidden || *rep.ID != "rs1" {
		t.Fatalf("reset without admin: %+v", rep)
	}
	admin.send(t, tp.Cmd, `{"id":"x","tool":"headlight.set","params":{"on":true}}`)
	if rep := decodeReply(t, admin.next(t, tp.Reply)); rep.Code != tools.CodeRefused {
		t.Fatalf("still latched expected: %+v", rep)
	}
	// The admin topic grants admin (the embedded broker lets only admin
	// users publish there).
	admin.send(t, tp.Admin, `{"id":"rs2","tool":"estop.reset"}`)
	if rep := decodeReply(t, admin.next(t, tp.Reply)); !rep.OK {
		t.Fatalf("reset on the admin topic: %+v", rep)
	}
	admin.send(t, tp.Cmd, `{"id":"y","tool":"headlight.set","params":{"on":true}}`)
	if rep := decodeReply(t, admin.next(t, tp.Reply)); !rep.OK || r.lamp.calls.Load() != 1 {
		t.Fatalf("after reset: %+v", rep)
	}
	select {
	case e := <-got:
		t.Fatalf("unexpected e-stop %+v", e)
	default:
	}
}

// TestEstopResetGrantedToMQTT: when the board grants admin to the mqtt
// caller, {"reset":true} on the estop topic works.
func TestEstopResetGrantedToMQTT(t *testing.T) {
	r := newRig(t, rigOpts{grants: []string{"actuate", "admin"}})
	r.start(t)
	tp := r.topics()
	c := dialPeer(t, r.url(), "c", tp.Reply)
	c.send(t, tp.Estop, "1")
	c.send(t, tp.Estop, `{"reset":true,"id":"z"}`)
	if rep := decodeReply(t, c.next(t, tp.Reply)); !rep.OK || *rep.ID != "z" {
		t.Fatalf("reset: %+v", rep)
	}
}

func TestPublishEventsTelemetryDecisions(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "watcher", tp.Prefix+"#")
	r.world.Record(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High, Message: "moved", Data: map[string]any{"area": 0.2}})
	r.world.Record(worldmodel.Event{Kind: "decision", Source: "agent", Priority: worldmodel.Low, Message: "cycle 1", Data: map[string]any{"path": "reflex"}})
	r.world.Record(worldmodel.Event{Kind: "weird", Source: "x", Data: map[string]any{"f": func() {}}})
	var ev pump.Event
	if err := json.Unmarshal(p.next(t, tp.Events).Payload(), &ev); err != nil || ev.Kind != "motion_start" || ev.Source != "front_cam" || ev.Priority != "high" || ev.Data["area"] != 0.2 {
		t.Fatalf("event %+v %v", ev, err)
	}
	if got := string(p.next(t, tp.State+"front_cam/motion").Payload()); got != "ON" {
		t.Fatalf("motion state %q", got)
	}
	if err := json.Unmarshal(p.next(t, tp.Decisions).Payload(), &ev); err != nil || ev.Kind != "decision" || ev.Data["path"] != "reflex" {
		t.Fatalf("decision %+v", ev)
	}
	if err := json.Unmarshal(p.next(t, tp.Events).Payload(), &ev); err != nil || !strings.Contains(fmt.Sprint(ev.Data["error"]), "not JSON-encodable") {
		t.Fatalf("unencodable event data: %+v", ev)
	}
	// Actuator states, retained.
	r.world.SetActuator("headlight", "on")
	if m := p.next(t, tp.State+"headlight"); string(m.Payload()) != "on" {
		t.Fatalf("actuator state %q", m.Payload())
	}

	// env publishes every reading (telemetry: 0), each message complete.
	for i, v := range []float64{20.5, 21, 21.5} {
		r.world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: v, Unit: "°C"})
		if i == 0 {
			r.world.Append(worldmodel.Observation{Source: "env.humidity", Kind: worldmodel.Reading, Value: 40, Unit: "%"})
		}
	}
	var seen []float64
	for len(seen) < 3 {
		var m map[string]any
		if err := json.Unmarshal(p.next(t, tp.Telemetry+"env").Payload(), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["time"].(string); !ok {
			t.Fatalf("telemetry without time: %v", m)
		}
		if v, ok := m["temperature"].(float64); ok && (len(seen) == 0 || seen[len(seen)-1] != v) {
			seen = append(seen, v)
		}
	}
	if seen[0] != 20.5 || seen[2] != 21.5 {
		t.Fatalf("every reading expected, got %v", seen)
	}
	// slow publishes at most every 300ms: ten readings, a few messages.
	start := time.Now()
	for i := range 10 {
		r.world.Append(worldmodel.Observation{Source: "slow.level", Kind: worldmodel.Reading, Value: float64(i), Unit: "cm"})
		time.Sleep(40 * time.Millisecond)
	}
	time.Sleep(350 * time.Millisecond)
	took := time.Since(start)
	if n := len(p.ch(tp.Telemetry + "slow")); n < 2 || n > int(took/(300*time.Millisecond))+1 {
		t.Fatalf("%d telemetry messages for slow in %v", n, took)
	}
}

// TestLastWillOnKilledAgent: an agent process killed with SIGKILL leaves
// "offline" on the status topic, by its last will.
func TestLastWillOnKilledAgent(t *testing.T) {
	lastWill(t, startBroker(t, broker.Config{Listen: "127.0.0.1:0"}).URL())
}

func lastWill(t *testing.T, url string) {
	tp := NewTopics("edgeagent/test-bot/", "test-bot", "homeassistant")
	p := dialPeer(t, url, "watcher", tp.Status)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), "EDGEAGENT_MQTT_CHILD="+url)
	out, _ := child.StdoutPipe()
	child.Stderr = os.Stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Wait()
	defer child.Process.Kill()
	ready := make(chan struct{})
	go func() {
		buf := make([]byte, 6)
		if n, _ := out.Read(buf); strings.HasPrefix(string(buf[:n]), "ready") {
			close(ready)
		}
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("child agent did not connect")
	}
	p.nextMatching(t, tp.Status, func(m paho.Message) bool { return string(m.Payload()) == "online" })
	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	m := p.nextMatching(t, tp.Status, func(m paho.Message) bool { return string(m.Payload()) != "online" })
	if string(m.Payload()) != "offline" {
		t.Fatalf("status after kill = %q", m.Payload())
	}
	// It is retained: a client arriving later sees it too.
	late := dialPeer(t, url, "late", tp.Status)
	if m := late.next(t, tp.Status); string(m.Payload()) != "offline" || !m.Retained() {
		t.Fatalf("late status = %q retained=%v", m.Payload(), m.Retained())
	}
}

func TestAdminOps(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	tp := r.topics()
	a := dialPeer(t, r.url(), "admin", tp.Reply+"/#")
	n := 0
	call := func(topic, body string) Reply {
		t.Helper()
		n++
		id := fmt.Sprintf("a%d", n)
		a.send(t, topic, `{"id":"`+id+`",`+body+`}`)
		m := a.nextMatching(t, tp.Reply, func(m paho.Message) bool { return strings.Contains(string(m.Payload()), `"id":"`+id+`"`) })
		return decodeReply(t, m)
	}
	result := func(rep Reply) string { b, _ := json.Marshal(rep.Result); return string(b) }

	rep := call(tp.Admin, `"op":"skills"`)
	if !rep.OK || !strings.Contains(result(rep), `"name":"headlight.set"`) || !strings.Contains(result(rep), `"required":["on"]`) || strings.Contains(result(rep), "world.query") {
		t.Fatalf("skills: %+v", rep)
	}
	if rep = call(tp.Admin, `"op":"disable","params":{"tool":"headlight.set"}`); !rep.OK {
		t.Fatalf("disable: %+v", rep)
	}
	if rep = call(tp.Cmd, `"tool":"headlight.set","params":{"on":true}`); rep.Code != CodeRefused || !strings.Contains(rep.Error, "disabled") {
		t.Fatalf("disabled tool ran: %+v", rep)
	}
	again, err := tools.NewRegistry(tools.Options{Store: r.store, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if again.Enabled("headlight.set") {
		t.Fatal("disabling was not remembered in the store")
	}
	if rep = call(tp.Admin, `"op":"enable","params":{"tool":"headlight.set"}`); !rep.OK {
		t.Fatalf("enable: %+v", rep)
	}
	if rep = call(tp.Cmd, `"tool":"headlight.set","params":{"on":true}`); !rep.OK {
		t.Fatalf("after enable: %+v", rep)
	}
	if rep = call(tp.Admin, `"op":"stats","params":{"tool":"headlight.set"}`); !rep.OK || !strings.Contains(result(rep), `"calls":1`) {
		t.Fatalf("stats: %s", result(rep))
	}
	// plugins, load, unload and reload are the node's admin tools: their
	// tests, over MQTT, are in node/mqtt_test.go.
	if rep = call(tp.Admin, `"op":"audit","params":{"limit":5}`); rep.Code != CodeNotFound {
		t.Fatalf("audit without the actuators plugin: %+v", rep)
	}
	if rep = call(tp.Admin, `"op":"status"`); !rep.OK || !strings.Contains(result(rep), `"state":`) {
		t.Fatalf("status: %+v", rep)
	}
	if rep = call(tp.Admin, `"op":"reboot"`); rep.Code != CodeNotFound {
		t.Fatalf("unknown op: %+v", rep)
	}
	if rep = call(tp.Admin, `"op":"enable","params":{"tol":"x"}`); rep.Code != CodeInvalid {
		t.Fatalf("op param typo: %+v", rep)
	}
}

// TestBufferWhileDisconnected: what is published while the broker is away
// is kept, bounded (oldest dropped and counted), and sent on reconnect.
func TestBufferWhileDisconnected(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	b := startBroker(t, broker.Config{Listen: addr})
	r := newRig(t, rigOpts{broker: "tcp://" + addr, options: reconnectFast})
	r.start(t)
	tp := r.topics()
	// The connect's retained announcements (resync, status, info, discovery
	// and the pump's state/estop) are out before the broker goes away, so the buffer
	// holds only the events.
	waittest.For(t, "announcements", func() bool { return r.plane.current().conn.stats().Published >= 5 })
	_ = b.Close()
	waittest.For(t, "disconnected", func() bool { return !r.plane.current().conn.client.IsConnectionOpen() })
	for i := range 20 {
		r.world.Record(worldmodel.Event{Kind: "tick", Source: "test", Message: fmt.Sprint(i)})
	}
	waittest.For(t, "events buffered", func() bool {
		s := r.plane.current().conn.stats()
		return s.Buffered == 8 && s.Dropped == 12
	})
	res, err := r.reg.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "mqtt.publish",
		Params: json.RawMessage(`{"topic":"edgeagent/test-bot/notes/a","payload":"while away"}`)})
	if err != nil || len(res.Notes) == 0 || !strings.Contains(res.Notes[0], "queued") {
		t.Fatalf("publish while away: %+v %v", res, err)
	}
	waittest.For(t, "buffered", func() bool {
		s := r.plane.current().conn.stats()
		return s.Buffered == 8 && s.Dropped == 13
	})
	// The second broker is reachable at the plane's address only once the
	// watcher has subscribed: the plane, retrying every second, could
	// otherwise flush the buffer to it first, to nobody.
	b2 := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	p := dialPeer(t, b2.URL(), "watcher", tp.Events, "edgeagent/test-bot/notes/#", tp.Status)
	forward(t, addr, b2.Addr())
	// A reconnect attempt that reached the first broker while it was
	// closing waits for paho's connect timeout (5s) before the next one.
	if m := p.nextWithin(t, tp.Status, 15*time.Second); string(m.Payload()) != "online" {
		t.Fatalf("status %q", m.Payload())
	}
	for i := 13; i < 20; i++ { // 7 newest events + the note = 8
		var ev pump.Event
		if err := json.Unmarshal(p.next(t, tp.Events).Payload(), &ev); err != nil || ev.Message != fmt.Sprint(i) {
			t.Fatalf("event %d: %+v %v", i, ev, err)
		}
	}
	if m := p.next(t, "edgeagent/test-bot/notes/a"); string(m.Payload()) != "while away" {
		t.Fatalf("note %q", m.Payload())
	}
	// onConnect counts the connection after its flush, so the messages can
	// arrive a moment before the count does.
	waittest.For(t, "the reconnect to be counted", func() bool {
		s := r.plane.current().conn.stats()
		return s.Buffered == 0 && s.Connects == 2
	})
	r.stop(t) // before b2 goes (cleanups run in reverse)
}

func TestPublishSkill(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.plane.cfg.PublishAllow = append(r.plane.cfg.PublishAllow, "edgeagent/test-bot/#")
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "watcher", "edgeagent/test-bot/notes/#", tp.Reply+"/#")
	invoke := func(params string) (tools.Result, error) {
		return r.reg.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "mqtt.publish", Params: json.RawMessage(params)})
	}
	if _, err := invoke(`{"topic":"edgeagent/test-bot/notes/door","payload":"opened"}`); err != nil {
		t.Fatal(err)
	}
	if m := p.next(t, "edgeagent/test-bot/notes/door"); string(m.Payload()) != "opened" || m.Retained() {
		t.Fatalf("got %q", m.Payload())
	}
	if _, err := invoke(`{"topic":"edgeagent/test-bot/notes/t","payload":{"c":21.5},"retain":true,"qos":1}`); err != nil {
		t.Fatal(err)
	}
	if m := p.next(t, "edgeagent/test-bot/notes/t"); string(m.Payload()) != `{"c":21.5}` {
		t.Fatalf("got %q", m.Payload())
	}
	for params, want := range map[string]string{
		`{"topic":"elsewhere/x","payload":"x"}`:                                                        "not allowed",
		`{"topic":"edgeagent/test-bot/cmd","payload":1}`:                                               "control topics",
		`{"topic":"edgeagent/test-bot/admin","payload":1}`:                                             "control topics",
		`{"topic":"edgeagent/test-bot/notes/+","payload":1}`:                                           "wildcards",
		`{"topic":"edgeagent/test-bot/notes/x"}`:                                                       "payload",
		`{"topic":"edgeagent/test-bot/notes/x","payload":"` + strings.Repeat("x", MaxPayload+1) + `"}`: "limit",
	} {
		if _, err := invoke(params); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.80s: err %v, want ~%q", params, err, want)
		}
	}
	// Over MQTT, with the mqtt caller's publish permission.
	p.send(t, tp.Cmd, `{"id":"n1","tool":"mqtt.publish","params":{"topic":"edgeagent/test-bot/notes/m","payload":"hi"}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); !rep.OK {
		t.Fatalf("%+v", rep)
	}
	if m := p.next(t, "edgeagent/test-bot/notes/m"); string(m.Payload()) != "hi" {
		t.Fatalf("got %q", m.Payload())
	}
}

// TestEmbeddedPortTakenByABroker: mosquitto (here another broker) already on
// the embedded broker's port: the agent says so and connects to it, and
// refuses the admin topic of a broker whose ACL it does not know.
func TestEmbeddedPortTakenByABroker(t *testing.T) {
	other := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	r := newRig(t, rigOpts{listen: other.Addr()})
	r.start(t)
	if rs := r.plane.current(); rs.broker != nil || rs.admin || rs.conn.broker != other.URL() {
		t.Fatalf("broker %v admin %v url %s", rs.broker, rs.admin, rs.conn.broker)
	}
	tp := r.topics()
	p := dialPeer(t, other.URL(), "c", tp.Reply+"/#")
	p.send(t, tp.Cmd, `{"id":"1","tool":"headlight.set","params":{"on":true}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); !rep.OK {
		t.Fatalf("%+v", rep)
	}
	p.send(t, tp.Admin, `{"id":"2","op":"skills"}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); rep.OK || *rep.ID != "2" || rep.Code != tools.CodeForbidden || !strings.Contains(rep.Error, "trust_broker_acl") {
		t.Fatalf("admin topic on a foreign broker: %+v", rep)
	}
}

func TestEmbeddedPortTakenByAnotherProgram(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	r := newRig(t, rigOpts{listen: l.Addr().String()})
	err = r.plane.OnAgentStart(context.Background())
	if err == nil || !strings.Contains(err.Error(), "not by an MQTT broker") {
		t.Fatalf("err = %v", err)
	}
}

// TestStopWhileBrokerUnreachable: starting does not wait for the broker,
// stopping is quick, and no goroutine is left once paho's backoff ends.
func TestStopWhileBrokerUnreachable(t *testing.T) {
	r := newRig(t, rigOpts{broker: fmt.Sprintf("tcp://127.0.0.1:%d", freePort(t)), options: reconnectFast})
	start := time.Now()
	if err := r.hooks.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A start that waited for the broker would not return (paho retries
	// until it connects): the bound catches that, not slowness, so it is
	// wide enough for the shared CI machine (124 ms once at load ~30).
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("start waited %v for the broker", took)
	}
	waittest.For(t, "a failed attempt", func() bool { return r.plane.current().conn.stats().LastError != "" })
	if st, _ := json.Marshal(r.plane.Status()); !strings.Contains(string(st), `"connected":false`) {
		t.Fatalf("status %s", st)
	}
	start = time.Now()
	r.stop(t)
	if took := time.Since(start); took > time.Second {
		t.Fatalf("stop took %v", took)
	}
	waitPahoGone(t, 3*time.Second)
}

// TestCall: what `edgeagent invoke` does when an agent already runs with
// the board.
func TestCall(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	cfg := r.cfg
	cfg.Broker = r.url() // the rig's embedded broker listens on a port chosen at start
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rep, err := Call(ctx, cfg, Command{Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}, false)
	if err != nil || !rep.OK || !r.lamp.on.Load() {
		t.Fatalf("%+v %v", rep, err)
	}
	if rep, err = Call(ctx, cfg, Command{Tool: "estop.reset"}, false); err != nil || rep.Code != tools.CodeForbidden {
		t.Fatalf("admin tool on cmd: %+v %v", rep, err)
	}
	if rep, err = Call(ctx, cfg, Command{Tool: "estop.reset"}, true); err != nil || !rep.OK {
		t.Fatalf("admin tool on admin: %+v %v", rep, err)
	}
	// Nobody answering: a timeout that says where it looked.
	other := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	cfg.Broker = other.URL()
	short, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	if _, err := Call(short, cfg, Command{Tool: "headlight.set"}, false); err == nil || !strings.Contains(err.Error(), "is the agent connected to "+other.URL()) {
		t.Fatalf("err = %v", err)
	}
}
