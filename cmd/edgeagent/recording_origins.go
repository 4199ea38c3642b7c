package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/tools"
)

// origins counts a recording's commands from outside the agent (tool calls
// outside any cycle, text commands) by caller, and within a caller those a
// fleet or a group sent (tools.Via), for `recording info`: an owner sees at
// once whether the robot acted on its own commands or on a broadcast.
type origins struct {
	callers map[string]int
	via     map[string]map[string]int // caller -> "group north" -> n
}

// add counts m when it is such a command.
func (o *origins) add(m recording.Msg) error {
	if m.Channel.Kind != record.KindRecord {
		return nil
	}
	var r struct {
		Kind string `json:"kind"`
		Data struct {
			Caller string     `json:"caller"`
			Cycle  uint64     `json:"cycle"`
			Via    *tools.Via `json:"via"`
		} `json:"data"`
	}
	if json.Unmarshal(m.Data, &r) != nil || r.Kind != "tool_call" && r.Kind != agent.RecordCommand || r.Data.Cycle != 0 || !outsideCallers[r.Data.Caller] {
		return nil
	}
	if o.callers == nil {
		o.callers, o.via = map[string]int{}, map[string]map[string]int{}
	}
	c := r.Data.Caller
	o.callers[c]++
	if r.Data.Via != nil {
		if o.via[c] == nil {
			o.via[c] = map[string]int{}
		}
		o.via[c][r.Data.Via.String()]++
	}
	return nil
}

// outsideCallers are the callers of commands from outside the agent (as a
// replay feeds them again); the agent's own (reflex, llm, motive) are not
// commands.
var outsideCallers = map[string]bool{"mqtt": true, "cli": true, "web": true}

// String is "mqtt 3 (fleet yard 1, group north 1), web 1": callers by
// count, most first.
func (o *origins) String() string {
	callers := slices.SortedFunc(maps.Keys(o.callers), func(a, b string) int {
		if o.callers[a] != o.callers[b] {
			return o.callers[b] - o.callers[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, 0, len(callers))
	for _, c := range callers {
		p := fmt.Sprintf("%s %d", c, o.callers[c])
		if v := o.via[c]; len(v) > 0 {
			var sub []string
			for _, k := range slices.Sorted(maps.Keys(v)) {
				sub = append(sub, fmt.Sprintf("%s %d", k, v[k]))
			}
			p += " (" + strings.Join(sub, ", ") + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ", ")
}
