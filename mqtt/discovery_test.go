package mqtt

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// TestDiscovery: the device config Home Assistant needs (dev, o, cmps with
// p and unique_id, availability), derived from the board and the world
// model, re-announced when Home Assistant comes back, removed on request.
func TestDiscovery(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	tp := r.topics()
	ha := dialPeer(t, r.url(), "ha", "homeassistant/#")
	d := checkDiscovery(t, ha.next(t, tp.DiscoveryConfig).Payload(), tp)
	// The relay has no pump.set tool here: no switch that cannot work.
	if got := platforms(d); got != "estop=button front_cam_motion=binary_sensor headlight=switch pan=number" {
		t.Fatalf("components: %s", got)
	}
	pan := d.Cmps["pan"]
	if pan["min"] != 10.0 || pan["max"] != 170.0 || pan["cmd_t"] != tp.Cmd || pan["stat_t"] != tp.State+"pan" {
		t.Fatalf("pan: %v", pan)
	}
	if d.Cmps["estop"]["cmd_t"] != tp.Estop || d.Cmps["front_cam_motion"]["stat_t"] != tp.State+"front_cam/motion" {
		t.Fatalf("estop/motion: %v %v", d.Cmps["estop"], d.Cmps["front_cam_motion"])
	}
	// Home Assistant's commands, rendered the way its templates would,
	// are valid commands that work.
	client := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	for key, rendered := range map[string]string{
		"headlight": strings.Replace(d.Cmps["headlight"]["cmd_tpl"].(string), "{{ 'true' if value == 'ON' else 'false' }}", "true", 1),
		"pan":       strings.Replace(d.Cmps["pan"]["cmd_tpl"].(string), "{{ value }}", "42.0", 1),
	} {
		client.send(t, tp.Cmd, rendered)
		if rep := decodeReply(t, client.next(t, tp.Reply)); !rep.OK {
			t.Fatalf("%s: HA command %s: %+v", key, rendered, rep)
		}
	}
	// A numeric reading appears: announced as a sensor with its unit.
	r.world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: 21, Unit: "°C"})
	// (The first config may arrive twice: live and retained.)
	d = checkDiscovery(t, ha.nextMatching(t, tp.DiscoveryConfig, func(m paho.Message) bool {
		return strings.Contains(string(m.Payload()), "env_temperature")
	}).Payload(), tp)
	s := d.Cmps["env_temperature"]
	if s["p"] != "sensor" || s["unit_of_meas"] != "°C" || s["dev_cla"] != "temperature" || s["stat_t"] != tp.Telemetry+"env" || s["val_tpl"] != "{{ value_json['temperature'] }}" {
		t.Fatalf("sensor: %v", s)
	}
	// Home Assistant restarts: the device is announced again.
	client.send(t, tp.HAStatus, "online")
	checkDiscovery(t, ha.next(t, tp.DiscoveryConfig).Payload(), tp)
	// Removed on request: an empty retained config, and it stays away.
	admin := dialPeer(t, r.url(), "admin", tp.Reply+"/#")
	admin.send(t, tp.Admin, `{"id":"d1","op":"discovery","params":{"remove":true}}`)
	if rep := decodeReply(t, admin.next(t, tp.Reply)); !rep.OK {
		t.Fatalf("remove: %+v", rep)
	}
	ha.nextMatching(t, tp.DiscoveryConfig, func(m paho.Message) bool { return len(m.Payload()) == 0 })
	client.send(t, tp.HAStatus, "online")
	if !ha.silent(tp.DiscoveryConfig, 200*time.Millisecond) {
		t.Fatal("re-announced after removal")
	}
	late := dialPeer(t, r.url(), "late-ha", tp.DiscoveryConfig)
	if !late.silent(tp.DiscoveryConfig, 200*time.Millisecond) {
		t.Fatal("the retained config survived removal")
	}
	admin.send(t, tp.Admin, `{"id":"d2","op":"discovery","params":{"remove":false}}`)
	checkDiscovery(t, ha.next(t, tp.DiscoveryConfig).Payload(), tp)
}

type discoveryDoc struct {
	Dev  map[string]any            `json:"dev"`
	O    map[string]any            `json:"o"`
	Avty []map[string]any          `json:"avty"`
	Cmps map[string]map[string]any `json:"cmps"`
	QoS  int                       `json:"qos"`
}

// checkDiscovery checks the fields Home Assistant requires of a device
// discovery payload.
func checkDiscovery(t *testing.T, payload []byte, tp Topics) discoveryDoc {
	t.Helper()
	var d discoveryDoc
	if err := json.Unmarshal(payload, &d); err != nil {
		t.Fatalf("discovery %q: %v", payload, err)
	}
	ids, _ := d.Dev["ids"].([]any)
	if len(ids) == 0 || d.Dev["name"] != "Test robot" || d.O["name"] != "edgeagent" {
		t.Fatalf("dev/o: %v %v", d.Dev, d.O)
	}
	if len(d.Avty) != 1 || d.Avty[0]["t"] != tp.Status {
		t.Fatalf("availability: %v", d.Avty)
	}
	seen := map[string]bool{}
	for key, c := range d.Cmps {
		uid, _ := c["unique_id"].(string)
		if p, _ := c["p"].(string); p == "" || uid == "" || seen[uid] {
			t.Fatalf("component %s lacks p or a unique unique_id: %v", key, c)
		}
		seen[uid] = true
	}
	return d
}

func platforms(d discoveryDoc) string {
	var out []string
	for key, c := range d.Cmps {
		out = append(out, key+"="+c["p"].(string))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
