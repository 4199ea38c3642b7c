package board

import "regexp"

// Fleet makes the robot a member of a fleet: besides its own topics it takes
// commands addressed to the whole fleet and to each of its groups, and the
// fleet's e-stop (see mqtt/README.md, "Fleets").
type Fleet struct {
	// Name is the fleet; empty means the robot is in no fleet.
	Name string `yaml:"name,omitempty"`
	// Groups this robot answers to (edgeagent/group/<group>/cmd).
	Groups []string `yaml:"groups,omitempty"`
	// Tools limits what fleet and group commands may call: tool names or
	// patterns ending in ".*" (e.g. "estop.*", "agent.status"). Empty:
	// whatever the mqtt caller may call. A fleet command is a broadcast, so a
	// short list is the safer board.
	Tools []string `yaml:"tools,omitempty"`
}

var (
	fleetNameRe    = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	toolPatternRe  = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*(\.\*)?$`)
	fleetNameRule  = "[a-z0-9][a-z0-9_-]* (it is a topic level)"
	toolPatternMsg = "a tool name or a pattern ending in .* (e.g. estop.*)"
)

func (v *validator) fleet() {
	f := v.c.Fleet
	if f.Name == "" {
		if len(f.Groups) > 0 || len(f.Tools) > 0 {
			v.missing("fleet.name", "required when fleet.groups or fleet.tools is set")
		}
		return
	}
	if !fleetNameRe.MatchString(f.Name) {
		v.fail("fleet.name", "must match %s", fleetNameRule)
	}
	seen := map[string]bool{}
	for i, g := range f.Groups {
		switch {
		case !fleetNameRe.MatchString(g):
			v.fail(indexPath("fleet.groups", i), "must match %s", fleetNameRule)
		case seen[g]:
			v.fail(indexPath("fleet.groups", i), "this group is listed twice")
		}
		seen[g] = true
	}
	for i, t := range f.Tools {
		if !toolPatternRe.MatchString(t) {
			v.fail(indexPath("fleet.tools", i), "want %s", toolPatternMsg)
		}
	}
}
