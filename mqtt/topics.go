package mqtt

import (
	"fmt"
	"strings"
)

// Topics are the control plane's topics for one device (DESIGN.md §7).
type Topics struct {
	Prefix    string // "edgeagent/<device-id>/"
	Status    string // retained: online | offline (last will) | stopped
	Info      string // retained: who this robot is (id, board, version, fleet), for fleet tools
	Cmd       string // commands in
	Admin     string // administration in (admin permission)
	Reply     string // replies out, unless a request names reply_to
	Events    string // world-model events out
	Decisions string // decision traces out
	Estop     string // e-stop in: any payload triggers, {"reset":true} resets
	Telemetry string // prefix of telemetry/<sensor>
	State     string // prefix of state/<actuator> and state/<sensor>/motion (retained, for Home Assistant)
	Resync    string // retained: the broker lost the agent's session; requesters resend what is unanswered

	// Home Assistant
	Discovery       string // discovery prefix, "homeassistant"
	DiscoveryConfig string // <discovery>/device/<id>/config
	HAStatus        string // <discovery>/status: HA's birth and last will
}

// NewTopics derives the topics from a prefix (ending in "/"), the device id
// and the Home Assistant discovery prefix.
func NewTopics(prefix, deviceID, discovery string) Topics {
	return Topics{
		Prefix:          prefix,
		Status:          prefix + "status",
		Info:            prefix + "info",
		Cmd:             prefix + "cmd",
		Admin:           prefix + "admin",
		Reply:           prefix + "reply",
		Events:          prefix + "events",
		Decisions:       prefix + "decisions",
		Estop:           prefix + "estop",
		Telemetry:       prefix + "telemetry/",
		State:           prefix + "state/",
		Resync:          prefix + "resync",
		Discovery:       discovery,
		DiscoveryConfig: discovery + "/device/" + deviceID + "/config",
		HAStatus:        discovery + "/status",
	}
}

// inputs are the topics the agent acts on. Nothing the agent publishes on
// someone's behalf (a reply_to, mqtt.publish) may land on them: that would
// let a requester act with the agent's identity, e.g. reach the admin topic
// through a reply.
func (t Topics) inputs() []string { return []string{t.Cmd, t.Admin, t.Estop, t.Status, t.HAStatus} }

// checkReplyTo says whether a requester may have replies published to
// topic: under <prefix>reply/, or anywhere outside the device's prefix and
// the discovery prefix that is not another robot's input topic (a reply
// landing on edgeagent/other-bot/estop would stop that robot in our name).
func (t Topics) checkReplyTo(topic string) error {
	if err := checkTopicName(topic); err != nil {
		return err
	}
	last := topic[strings.LastIndexByte(topic, '/')+1:]
	switch {
	case topic == t.Reply || strings.HasPrefix(topic, t.Reply+"/"):
		return nil
	case last == "cmd" || last == "admin" || last == "estop" || last == "status":
		return fmt.Errorf("reply_to %q: looks like a control topic (…/%s)", topic, last)
	case strings.HasPrefix(topic, t.Prefix):
		return fmt.Errorf("reply_to %q: under the device prefix only %s/… may be used", topic, t.Reply)
	case t.Discovery != "" && (topic == t.Discovery || strings.HasPrefix(topic, t.Discovery+"/")):
		return fmt.Errorf("reply_to %q: the discovery prefix belongs to Home Assistant", topic)
	}
	return nil
}

// matchFilter reports whether an MQTT topic filter (with + and #) matches a
// topic name.
func matchFilter(filter, topic string) bool {
	for {
		f, frest, fmore := strings.Cut(filter, "/")
		if f == "#" {
			return true
		}
		t, trest, tmore := strings.Cut(topic, "/")
		if f != "+" && f != t {
			return false
		}
		if !fmore || !tmore {
			// "a/#" also matches "a" (the parent level).
			return fmore == tmore || (fmore && frest == "#")
		}
		filter, topic = frest, trest
	}
}
