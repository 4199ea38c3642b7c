package tools

// Via marks an outside call that came by way of a broadcast: a command on
// a fleet's or a group's MQTT topic. It runs as caller mqtt, exactly as one
// on the robot's own cmd topic (same permissions, same duplicate
// suppression), so the caller cannot tell them apart; its tool_call record
// (and a text command's command record) carries this mark instead, and an
// owner reading the stream or a recording sees a broadcast for what it is.
// A call without one came to this robot directly.
type Via struct {
	Kind  string `json:"kind"`  // "fleet" or "group"
	Name  string `json:"name"`  // the fleet's or the group's name
	Topic string `json:"topic"` // the topic the command arrived on
}

// The kinds of Via.
const (
	ViaFleet = "fleet"
	ViaGroup = "group"
)

// String is the mark as a listing shows it: "group north".
func (v *Via) String() string {
	if v == nil {
		return ""
	}
	return v.Kind + " " + v.Name
}
