package mqttsub

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/mqtt/mosquittotest"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The kind against the two brokers a robot meets: the embedded one
// (mochi) and mosquitto. Publishers are plain paho clients, as Zigbee2MQTT,
// Frigate and Home Assistant are.

func TestHouseSensorsEmbedded(t *testing.T) {
	t.Parallel()
	houseSensors(t, startEmbedded(t, "127.0.0.1:0", nil).URL())
}

func TestHouseSensorsMosquitto(t *testing.T) {
	t.Parallel()
	houseSensors(t, startMosquitto(t, mosquittotest.FreePort(t)))
}

// houseSensors: the three examples of docs/add-a-sensor.md.
func houseSensors(t *testing.T, url string) {
	block := `
- name: house
  kind: mqtt
  priority: high
  thresholds:
    - {quantity: front_door, above: 0.5, hysteresis: 0.5, priority: normal, event: door_opened}
  options:
    broker: ` + url + `
    topics:
      - topic: zigbee2mqtt/+
        readings:
          - {name: temperature, json: temperature, unit: "°C"}
          - {name: humidity, json: humidity, unit: "%RH"}
      - topic: homeassistant/binary_sensor/front_door/state
        readings:
          - {name: front_door, on: ["on"], off: ["off"]}
      - topic: frigate/events
        events:
          - event: person
            match: [{json: type, equals: [new]}, {json: after.label, equals: [person]}]
            data: {camera: after.camera, score: after.top_score}
`
	cfg := sensortest.Board(t, "sim", block)
	rec := sensortest.NewRecorder()
	s, stop := start(t, cfg, sensors.WithThresholds("house", sensortest.Thresholds(t, "sim", block), rec))
	defer stop()
	rec.WaitFor(t, 5*time.Second, "connected", func() bool { return len(rec.Observations("house.health")) > 0 })
	pub := dial(t, url)
	publish(t, pub, "zigbee2mqtt/living_room", z2mPayload)
	publish(t, pub, "zigbee2mqtt/bridge/state", `{"state":"online"}`) // no temperature: skipped quietly
	publish(t, pub, "homeassistant/binary_sensor/front_door/state", "off")
	publish(t, pub, "homeassistant/binary_sensor/front_door/state", "on")
	publish(t, pub, "frigate/events", `{"type":"new","after":{"label":"car","camera":"drive"}}`)
	publish(t, pub, "frigate/events", `{"type":"new","after":{"label":"person","camera":"porch","top_score":0.84}}`)
	publish(t, pub, "frigate/events", `{"type":"update","after":{"label":"person","camera":"porch","top_score":0.9}}`)
	rec.WaitFor(t, 5*time.Second, "readings and events", func() bool {
		return len(rec.Values("house.temperature")) == 1 && len(rec.Values("house.front_door")) == 2 &&
			len(rec.Events("person")) == 1 && len(rec.Events("door_opened")) == 1
	})
	if v := rec.Observations("house.temperature")[0]; v.Value != 22.41 || v.Unit != "°C" {
		t.Errorf("temperature %+v", v)
	}
	if v := rec.Values("house.front_door"); v[0] != 0 || v[1] != 1 {
		t.Errorf("door %v", v)
	}
	e := rec.Events("person")[0]
	if e.Source != "house" || e.Priority.String() != "high" || e.Data["camera"] != "porch" || e.Data["score"] != 0.84 || e.Data["topic"] != "frigate/events" {
		t.Errorf("person event %+v", e)
	}
	if n := s.bad.Load(); n != 0 {
		t.Errorf("%d bad payloads", n)
	}
}

// A restarted broker: the sensor reports the fault, reconnects,
// subscribes again and reads on.
func TestReconnect(t *testing.T) {
	t.Parallel()
	b := startEmbedded(t, "127.0.0.1:0", nil)
	addr := b.Addr()
	cfg := sensortest.Board(t, "sim", `
- name: z
  kind: mqtt
  options:
    broker: `+b.URL()+`
    retry: {initial: 50ms, max: 200ms}
    topics: [{topic: t/v, readings: [{name: v}]}]
`)
	rec := sensortest.NewRecorder()
	_, stop := start(t, cfg, rec)
	defer stop()
	rec.WaitFor(t, 5*time.Second, "connected", func() bool { return len(rec.Observations("z.health")) > 0 })
	publish(t, dial(t, b.URL()), "t/v", "1")
	rec.WaitFor(t, 5*time.Second, "first reading", func() bool { return len(rec.Values("z.v")) == 1 })
	_ = b.Close()
	rec.WaitFor(t, 5*time.Second, "fault", func() bool { return len(rec.Events(sensors.EventFault)) == 1 })
	b2 := startEmbedded(t, addr, nil)
	rec.WaitFor(t, 10*time.Second, "recovered", func() bool { return len(rec.Events(sensors.EventRecovered)) == 1 })
	publish(t, dial(t, b2.URL()), "t/v", "2")
	rec.WaitFor(t, 5*time.Second, "reading after reconnect", func() bool { return len(rec.Values("z.v")) == 2 })
}

// Auth on the embedded broker: a user's password from a file; a wrong one
// leaves the sensor degraded with the reason, not crashed; a topic outside
// the user's ACL is reported as refused.
func TestAuth(t *testing.T) {
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	b := startEmbedded(t, "127.0.0.1:0", []broker.User{{Username: "robot", PasswordBcrypt: string(hash)}})
	dir := t.TempDir()
	for name, pw := range map[string]string{"good": "s3cret\n", "bad": "guess"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(pw), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(file, topic string) *sensortest.Recorder {
		cfg := sensortest.Board(t, "sim", `
- name: a
  kind: mqtt
  options: {broker: `+b.URL()+`, username: robot, password_file: `+filepath.Join(dir, file)+`, retry: {initial: 1s}, topics: [{topic: "`+topic+`", readings: [{name: v}]}]}
`)
		rec := sensortest.NewRecorder()
		_, stop := start(t, cfg, rec)
		t.Cleanup(stop)
		return rec
	}
	ok := run("good", "edgeagent/test/v")
	wrong := run("bad", "edgeagent/test/v")
	refused := run("good", "frigate/events")
	ok.WaitFor(t, 5*time.Second, "connected", func() bool { return len(ok.Observations("a.health")) > 0 })
	for name, rec := range map[string]*sensortest.Recorder{"wrong password": wrong, "outside ACL": refused} {
		rec.WaitFor(t, 5*time.Second, name, func() bool { return len(rec.Events(sensors.EventFault)) == 1 })
		msg := rec.Events(sensors.EventFault)[0].Message
		if strings.Contains(msg, "s3cret") || strings.Contains(msg, "guess") {
			t.Errorf("%s: fault message leaks the password: %q", name, msg)
		}
		if name == "outside ACL" && !strings.Contains(msg, "refused") {
			t.Errorf("%s: %q", name, msg)
		}
	}
}

// 1 MB documents extract; binary and oversized payloads are counted, never
// fatal, and the sensor reads on.
func TestLargeAndBinaryPayloads(t *testing.T) {
	t.Parallel()
	b := startEmbedded(t, "127.0.0.1:0", nil)
	cfg := sensortest.Board(t, "sim", `
- name: big
  kind: mqtt
  options:
    broker: `+b.URL()+`
    max_payload: 1000000
    topics: [{topic: "big/#", readings: [{name: v, json: last.v}]}]
`)
	rec := sensortest.NewRecorder()
	s, stop, logs := startLogged(t, cfg, rec)
	defer stop()
	rec.WaitFor(t, 5*time.Second, "connected", func() bool { return len(rec.Observations("big.health")) > 0 })
	pad := strings.Repeat("x", 999_000)
	doc := `{"pad":"` + pad + `","arr":[1,2,3],"last":{"v":7.5}}`
	if len(doc) >= 1_000_000 {
		t.Fatalf("doc %d bytes", len(doc))
	}
	pub := dial(t, b.URL())
	publish(t, pub, "big/doc", doc)
	binary := make([]byte, 4096)
	for i := range binary {
		binary[i] = byte(i * 7)
	}
	publish(t, pub, "big/bin", string(binary))
	publish(t, pub, "big/huge", `{"last":{"v":1},"pad":"`+pad+strings.Repeat("y", 1500)+`"}`) // over max_payload
	publish(t, pub, "big/small", `{"last":{"v":-2}}`)
	rec.WaitFor(t, 5*time.Second, "readings", func() bool { return len(rec.Values("big.v")) == 2 })
	if v := rec.Values("big.v"); v[0] != 7.5 || v[1] != -2 {
		t.Errorf("values %v", v)
	}
	if n := s.bad.Load(); n != 2 {
		t.Errorf("%d bad payloads, want 2", n)
	}
	if out := logs.String(); !strings.Contains(out, "topic=big/bin") || strings.Contains(out, "xxxx") {
		t.Errorf("log: %s", out)
	}
}

// A flood of bad payloads costs one log line per 10 s, and good readings
// behind it still arrive.
func TestFlood(t *testing.T) {
	t.Parallel()
	b := startEmbedded(t, "127.0.0.1:0", nil)
	cfg := sensortest.Board(t, "sim", `
- name: f
  kind: mqtt
  options: {broker: `+b.URL()+`, topics: [{topic: f/v, qos: 1, readings: [{name: v, json: v}]}]}
`)
	// Time stands still for the sensor: its bad-payload log says one line
	// per 10 s however long the machine takes to chew through the flood.
	cfg.Clock = clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var good atomic.Int64
	out := countSink{n: &good}
	s, stop, logs := startLogged(t, cfg, out)
	defer stop()
	pub := dial(t, b.URL())
	// Wait for the subscription: publish until a reading arrives.
	for warm := time.Now().Add(5 * time.Second); good.Load() == 0 && time.Now().Before(warm); {
		publish(t, pub, "f/v", `{"v":0}`)
		time.Sleep(20 * time.Millisecond)
	}
	good.Store(0)
	const n = 5000
	for i := range n {
		pub.Publish("f/v", 1, false, []byte(fmt.Sprintf("garbage %d \x00\x01", i)))
	}
	if tok := pub.Publish("f/v", 1, false, []byte(`{"v":1}`)); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatal("publish", tok.Error())
	}
	deadline := time.Now().Add(20 * time.Second)
	for (good.Load() == 0 || s.bad.Load() < n) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if s.bad.Load() != n || good.Load() != 1 {
		t.Fatalf("bad %d (want %d), good %d", s.bad.Load(), n, good.Load())
	}
	if lines := strings.Count(logs.String(), "bad payload"); lines != 1 {
		t.Errorf("%d log lines for %d bad payloads", lines, n)
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for block, want := range map[string]string{
		`{broker: "192.168.1.10", topics: [{topic: a, readings: [{name: v}]}]}`: "options.broker",
		`{broker: "http://h:1", topics: [{topic: a, readings: [{name: v}]}]}`:   "scheme",
		`{topics: []}`:           "at least one topic",
		`{topics: [{topic: a}]}`: "nothing to take",
		`{topics: [{topic: "a/#/b", readings: [{name: v}]}]}`:                          "last level",
		`{topics: [{topic: a, qos: 2, readings: [{name: v}]}]}`:                        "qos",
		`{password: x, password_file: y, topics: [{topic: a, readings: [{name: v}]}]}`: "not both",
		`{tls: {cert: c.pem}, topics: [{topic: a, readings: [{name: v}]}]}`:            "cert and key",
		`{topics: [{topic: a, events: [{event: p, priority: urgent}]}]}`:               "priority",
		`{topics: [{topic: a, readings: [{name: v, regexp: "("}]}]}`:                   "readings[0]: regexp",
		`{max_payload: 0, topics: [{topic: a, readings: [{name: v}]}]}`:                "max_payload",
		`{topics: [{topic: a, readings: [{name: v, jsonpath: x}]}]}`:                   "jsonpath",
	} {
		cfg, err := sensortest.ParseBoard("sim", "- {name: m, kind: mqtt, options: "+block+"}")
		if err == nil {
			_, err = New(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", block, err, want)
		}
	}
}

// --- helpers

func start(t testing.TB, cfg sensors.Config, out sensors.Sink) (*Sensor, func()) {
	t.Helper()
	s, stop, _ := startLogged(t, cfg, out)
	return s, stop
}

// startLogged also captures the sensor's log.
func startLogged(t testing.TB, cfg sensors.Config, out sensors.Sink) (*Sensor, func(), *syncbuf.Buffer) {
	t.Helper()
	ss, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, logs := ss.(*Sensor), &syncbuf.Buffer{}
	s.log = slog.New(slog.NewTextHandler(logs, nil))
	return s, sensortest.Run(t, s, out), logs
}

type countSink struct{ n *atomic.Int64 }

func (c countSink) Observe(o worldmodel.Observation) {
	if o.Source == "f.v" {
		c.n.Add(1)
	}
}
func (countSink) Raise(worldmodel.Event) {}

// startEmbedded starts the agent's embedded broker with the ACL the
// control plane gives device "test".
func startEmbedded(t testing.TB, listen string, users []broker.User) *broker.Broker {
	t.Helper()
	b, err := broker.Start(broker.Config{Listen: listen, Users: users, Log: slog.New(slog.DiscardHandler),
		ACL: broker.ACL{Prefix: "edgeagent/test/", Discovery: "homeassistant",
			Publish: []string{"edgeagent/test/cmd", "edgeagent/test/estop", "homeassistant/status"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

// startMosquitto runs the real mosquitto on a free port, or skips.
func startMosquitto(t *testing.T, port int) string {
	t.Helper()
	bin, err := exec.LookPath("mosquitto")
	if err != nil {
		t.Skip("mosquitto not installed (apt-get install mosquitto)")
	}
	conf := filepath.Join(t.TempDir(), "mosquitto.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "listener %d 127.0.0.1\nallow_anonymous true\npersistence false\n", port), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-c", conf)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if i > 200 {
			t.Fatal("mosquitto did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "tcp://" + addr
}

func dial(t testing.TB, url string) paho.Client {
	t.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID(fmt.Sprintf("pub-%d", time.Now().UnixNano())))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect %s: %v", url, tok.Error())
	}
	t.Cleanup(func() { c.Disconnect(50) })
	return c
}

func publish(t *testing.T, c paho.Client, topic, payload string) {
	t.Helper()
	if tok := c.Publish(topic, 1, false, []byte(payload)); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("publish %s: %v", topic, tok.Error())
	}
}
