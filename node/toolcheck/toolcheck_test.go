package toolcheck

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/tools"
)

// voice_probe stands for a plugin whose program is not installed: it
// declines, saying which tool it would have brought.
func init() {
	plugin.Register("voice_probe", func(h plugin.Host) (hooks.Plugin, error) {
		if _, ok := h.Board().Plugins["voice_probe"]; !ok {
			return nil, hooks.Decline("not configured")
		}
		return nil, hooks.DeclineTools("voice_probe: espeak-ng is not installed", "voice.say")
	})
}

const toolNamesBoard = `device: {id: tool-bot, platform: sim}
agent: {heartbeat: 1h}
fleet:
  name: yard
  tools: [agent.status, agent.*, agnt.*, agent.stat]
reflexes:
  - on: motion_start
    do: {tool: agent.status}
  - on: motion_start
    do: {tool: agent.stauts}
  - on: wake_word
    do: {tool: voice.say, params: {text: hi}}
plugins:
  voice_probe: {}
`

// TestCheckNamesWhatIsMissing: check reports, at file:line:col, a
// reflex or fleet allow-list entry naming a tool nobody provides, with a
// did-you-mean, or the reason its plugin did not start; a call of such a
// tool is answered with that reason.
func TestCheckNamesWhatIsMissing(t *testing.T) {
	cfg, err := board.Parse("tools.yaml", []byte(strings.Replace(toolNamesBoard, "device:", "data_dir: "+t.TempDir()+"\ndevice:", 1)))
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	err = Check(n)
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var be *board.Error
		if !errors.As(e, &be) {
			t.Fatalf("not a board error: %v", e)
		}
		got = append(got, e.Error())
	}
	want := []string{
		`tools.yaml:6:34: fleet.tools[2]: no loaded plugin provides this tool (did you mean "agent.*"?)`,
		`tools.yaml:6:42: fleet.tools[3]: no loaded plugin provides this tool (did you mean "agent.status"?)`,
		`tools.yaml:11:16: reflexes[1].do.tool: no loaded plugin provides this tool (did you mean "agent.status"?)`,
		`tools.yaml:13:16: reflexes[2].do.tool: the tool is not available: plugin voice_probe did not start: voice_probe: espeak-ng is not installed`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	_, err = n.Tools.Invoke(t.Context(), tools.Call{Caller: "cli", Tool: "voice.say"})
	if err == nil || !strings.Contains(err.Error(), "espeak-ng is not installed") {
		t.Fatalf("calling the absent tool: %v", err)
	}
}
