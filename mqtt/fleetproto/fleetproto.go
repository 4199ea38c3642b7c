// Package fleetproto is what robots and their requesters (`edgeagent
// fleet`, `edgeagent invoke` through the agent's broker) agree on beyond a
// single robot's topics (mqtt/README.md, "Fleets" and "When the broker
// loses commands"): the topic layout under the root a fleet's robots
// share, the retained payloads that describe a robot (info) and announce
// a lost session (resync), and the requester's half of a resync, the
// Resender.
package fleetproto

import (
	"strings"
	"time"
)

// Root is the topic root a fleet's robots share: their prefix without
// the device level ("edgeagent/r1/" -> "edgeagent/").
func Root(prefix, deviceID string) string {
	if root, ok := strings.CutSuffix(prefix, deviceID+"/"); ok {
		return root
	}
	return prefix
}

// FleetTopic is a fleet's topic: <root>fleet/<fleet>/<leaf>, leaf "cmd"
// (every member runs the command) or "estop" (every member stops).
func FleetTopic(root, fleet, leaf string) string { return root + "fleet/" + fleet + "/" + leaf }

// GroupCmd is where a group's commands go: <root>group/<group>/cmd.
func GroupCmd(root, group string) string { return root + "group/" + group + "/cmd" }

// ResyncFilter is the topic filter of every robot's resync under root
// (the robots' prefix without the device level, "edgeagent/").
func ResyncFilter(root string) string { return root + "+/resync" }

// Topics are the fleet's input topics of one member; zero without a fleet.
type Topics struct {
	Cmd    string   // <root>fleet/<name>/cmd
	Estop  string   // <root>fleet/<name>/estop
	Groups []string // <root>group/<group>/cmd, one per group
}

// Member derives the topics of a member of fleet (and of its groups)
// under root; "" is no fleet.
func Member(root, fleet string, groups []string) Topics {
	if fleet == "" {
		return Topics{}
	}
	t := Topics{Cmd: FleetTopic(root, fleet, "cmd"), Estop: FleetTopic(root, fleet, "estop")}
	for _, g := range groups {
		t.Groups = append(t.Groups, GroupCmd(root, g))
	}
	return t
}

// Inputs are the topics a member subscribes to.
func (t Topics) Inputs() []string {
	if t.Cmd == "" {
		return nil
	}
	return append([]string{t.Cmd, t.Estop}, t.Groups...)
}

// RobotInfo is the retained payload of <prefix>info: who the robot is.
type RobotInfo struct {
	ID       string   `json:"id"`
	Name     string   `json:"name,omitempty"`
	Platform string   `json:"platform"`
	Model    string   `json:"model,omitempty"`
	Version  string   `json:"version"`
	Fleet    string   `json:"fleet,omitempty"`
	Groups   []string `json:"groups,omitempty"`
	Started  string   `json:"started"` // RFC 3339: a robot that restarted shows a new time
}

// Resync is the retained payload of <prefix>resync: the broker had lost
// the robot's session, and with it commands it had acknowledged.
type Resync struct {
	Robot string `json:"robot"`
	// GapStart is when the agent lost its connection (its start, for
	// the first one); GapEnd when it was subscribed again. Commands
	// acknowledged by the broker in between may be lost.
	GapStart time.Time `json:"gap_start"`
	GapEnd   time.Time `json:"gap_end"`
}
