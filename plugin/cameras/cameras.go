// Package cameras is what the camera tools (camera.snapshot,
// camera.describe) share about their "camera" argument: which cameras the
// board has, the argument's JSON schema, and which camera a call means.
package cameras

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/tools"
)

// kind is the camera sensor kind, spelled out: a tool does not import a
// sensor driver.
const kind = "camera"

// Set is the names of a board's enabled cameras, in board order.
type Set []string

// Of returns the enabled cameras of the host's board (none: an empty Set).
func Of(h plugin.Host) Set {
	var s Set
	for _, sc := range h.Board().Sensors {
		if sc.Kind == kind && sc.Enabled {
			s = append(s, sc.Name)
		}
	}
	return s
}

// Touches returns, for each camera, its name with each of the suffixes
// (".snapshot"): the world-model sources a tool reads or writes.
func (s Set) Touches(suffixes ...string) []string {
	out := make([]string, 0, len(s)*len(suffixes))
	for _, c := range s {
		for _, suf := range suffixes {
			out = append(out, c+suf)
		}
	}
	return out
}

// Spec is a camera tool's spec: read permission, the scenarios a camera
// serves, each camera's sources with the suffixes as what it touches, and
// params of an object with the "camera" argument (one of the cameras,
// optional on a board with one) besides props, the tool's own properties
// (JSON object members, without braces or a leading comma).
func (s Set) Spec(name, description, props string, suffixes ...string) tools.Spec {
	names, _ := json.Marshal([]string(s)) // a []string always marshals
	if props != "" {
		props = ",\n    " + props
	}
	return tools.Spec{
		Name:        name,
		Description: description,
		Permission:  "read",
		Scenarios:   []string{"security", "interaction", "maintenance"},
		Touches:     s.Touches(suffixes...),
		Params: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "camera": {"type": "string", "enum": %s, "description": "which camera; may be left out when the board has only one"}%s
  },
  "additionalProperties": false
}`, names, props)),
	}
}

// Pick returns the camera a call names, or the only one when it names none.
func (s Set) Pick(name string) (string, error) {
	if name == "" {
		if len(s) != 1 {
			return "", fmt.Errorf("this board has %d cameras (%v): say which", len(s), []string(s))
		}
		return s[0], nil
	}
	if !slices.Contains(s, name) {
		return "", fmt.Errorf("no camera %q (cameras: %v)", name, []string(s))
	}
	return name, nil
}
