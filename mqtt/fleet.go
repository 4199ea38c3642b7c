package mqtt

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Fleets (mqtt/README.md, "Fleets"): a robot in a fleet also takes commands
// addressed to the fleet and to each of its groups, and stops on the fleet's
// e-stop. Those commands run exactly like commands on the robot's own cmd
// topic (same caller, same duplicate suppression by id, same busy
// back-pressure) and are answered on the robot's own reply topic, with its
// id in the reply, so the sender can count who answered. Their records in
// the stream are marked with the fleet or group and the topic (tools.Via),
// so a recording tells them from the robot's own commands. fleet.tools limits
// what a broadcast may call. The topics are package fleetproto's.

// fleetFilters adds the fleet's subscriptions to a connect's.
func (p *Plane) fleetFilters(filters map[string]byte, qos byte) {
	for _, t := range p.fleet.Inputs() {
		filters[t] = qos
	}
}

// routeFleet handles a message on a fleet topic. It reports whether the
// message was queued as a command: then the worker acknowledges it.
func (p *Plane) routeFleet(rs *runState, msg paho.Message) (queued bool) {
	switch t := msg.Topic(); {
	case p.fleet.Cmd == "":
	case t == p.fleet.Estop:
		p.onFleetEstop(rs, msg)
	case t == p.fleet.Cmd:
		return p.onCommand(rs, msg, source{via: &tools.Via{Kind: tools.ViaFleet, Name: p.cfg.Fleet.Name, Topic: t}})
	default:
		if i := slices.Index(p.fleet.Groups, t); i >= 0 {
			return p.onCommand(rs, msg, source{via: &tools.Via{Kind: tools.ViaGroup, Name: p.cfg.Fleet.Groups[i], Topic: t}})
		}
	}
	return false
}

// fleetAllows says whether a broadcast command may run here: fleet.tools,
// when set, lists the tools (and prefix.* patterns) it may call; a sentence
// for the decision engine could call anything, so it is refused then, and
// administration is never taken from a broadcast.
func (p *Plane) fleetAllows(cmd Command) error {
	allow := p.cfg.Fleet.Tools
	switch {
	case cmd.Op != "":
		return &RequestError{ID: cmd.ID, Code: tools.CodeForbidden, Msg: "administration is not taken from fleet or group topics"}
	case len(allow) == 0:
		return nil
	case cmd.Text != "":
		return &RequestError{ID: cmd.ID, Code: tools.CodeForbidden, Msg: "fleet.tools limits fleet commands to tool calls; a sentence could call anything"}
	}
	name := cmd.Tool
	if spec, err := p.d.Tools.Resolve(cmd.Tool); err == nil {
		name = spec.Name
	}
	for _, a := range allow {
		if a == name || (strings.HasSuffix(a, ".*") && strings.HasPrefix(name, strings.TrimSuffix(a, "*"))) {
			return nil
		}
	}
	return &RequestError{ID: cmd.ID, Code: tools.CodeForbidden, Msg: fmt.Sprintf("%s may not be called from fleet or group topics here (fleet.tools: %v)", cmd.Tool, allow)}
}

// onFleetEstop stops this robot as its own e-stop topic would, then
// acknowledges on its reply topic: the sender counts the acknowledgements
// to know when the last robot is stopped. A reset is not taken from a
// broadcast: each robot is released on its own, by an administrator.
func (p *Plane) onFleetEstop(rs *runState, msg paho.Message) {
	if msg.Retained() {
		p.log.Warn("ignoring a retained message on the fleet e-stop topic (clear it: publish an empty retained message)", "topic", msg.Topic())
		return
	}
	id, _ := peekIDs(msg.Payload()[:min(len(msg.Payload()), MaxPayload)])
	start := p.d.Clock.Now()
	p.d.Host.Raise(worldmodel.Event{Kind: "estop", Source: "mqtt", Priority: worldmodel.Critical,
		Message: "fleet e-stop over MQTT (" + msg.Topic() + ")", Data: map[string]any{"topic": msg.Topic()}})
	// Raise runs the critical handlers synchronously: the actuators are in
	// their safe state and the latch is set by now.
	p.sendReply(rs, p.topics.Reply, replyFor(id, map[string]any{
		"estop": "latched", "took_us": p.d.Clock.Since(start).Microseconds()}, nil))
}

// source is where a command came from: the robot's cmd topic, its admin
// topic, or a fleet/group topic (via, the mark its records carry).
type source struct {
	admin bool
	via   *tools.Via
}

func (p *Plane) info() []byte {
	d := p.cfg.Device
	data, _ := json.Marshal(fleetproto.RobotInfo{ID: p.cfg.DeviceID, Name: d.Name, Platform: d.Platform, Model: d.Model,
		Version: version(), Fleet: p.cfg.Fleet.Name, Groups: p.cfg.Fleet.Groups, Started: p.started.UTC().Format(time.RFC3339)}) // plain strings: always encodes
	return data
}

// TLSConfig builds a client TLS config from PEM files (CA, client cert and
// key), as the control plane does for the robot's broker: fleet tools and
// the robots use the same rules.
func TLSConfig(t TLS) (*tls.Config, error) {
	return mqttclient.TLS("mqtt.tls", mqttclient.Files(t))
}

// FleetRoot is the topic root a robot shares with its fleet.
func (c Config) FleetRoot() string { return fleetproto.Root(c.Prefix, c.DeviceID) }
