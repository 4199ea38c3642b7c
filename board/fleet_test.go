package board

import (
	"strings"
	"testing"
)

func TestFleetMembership(t *testing.T) {
	c, err := Parse("f.yaml", []byte("device: {id: r1, platform: sim}\nfleet: {name: farm-a, groups: [north, sprayers], tools: [estop.*, agent.status]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Fleet.Name != "farm-a" || len(c.Fleet.Groups) != 2 || c.Fleet.Tools[0] != "estop.*" {
		t.Fatalf("%+v", c.Fleet)
	}
	for _, tc := range []struct{ yaml, want string }{
		{"fleet: {name: Farm}", `2:15: fleet.name: must match`},
		{"fleet: {name: f, groups: [a, a]}", `fleet.groups[1]: this group is listed twice`},
		{"fleet: {name: f, groups: [a/b]}", `fleet.groups[0]: must match`},
		{"fleet: {name: f, tools: [\"*\"]}", `fleet.tools[0]: want a tool name`},
		{"fleet: {groups: [a]}", "fleet.name: required when fleet.groups"},
		{"fleet: {name: f, group: [a]}", "fleet.group"},
	} {
		_, err := Parse("f.yaml", []byte("device: {id: r1, platform: sim}\n"+tc.yaml+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
