package node

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/admin"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// adminTools are the registry's own administration and tools/admin's: the
// node registers them as their owner, since they change the node itself,
// and gives them its plugins, its board file and its reload hand-off.
func (n *Node) adminTools() []tools.Tool {
	return append(tools.Admin(n.Tools), admin.Tools(admin.Config{
		Plugins: n, Check: CheckConfig, Dir: n.dir, File: n.file, Reloads: n.reloads, Log: n.Log, Clock: n.clock,
	})...)
}

// ReloadRequests delivers the board configs accepted by config.reload.
// Whoever runs the node (cmd/edgeagent run) stops it and runs a node built
// from the config instead; when nobody receives, the request is answered
// refused ("restart edgeagent with it").
func (n *Node) ReloadRequests() <-chan admin.Reload { return n.reloads }

// CheckConfig builds a node from cfg without a store and without starting
// it: sensor kinds, their options and every plugin's options are checked.
func CheckConfig(cfg *board.Config, dir string) error {
	dry, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), ConfigDir: dir, NoStore: true})
	if err != nil {
		return err
	}
	return dry.Close()
}

// ReloadRecord is the kind of the record NoteReload writes.
const ReloadRecord = "reload"

// Reloaded is a ReloadRecord's data.
type Reloaded struct {
	Board  string `json:"board"`  // the new board as YAML (Marshal), the MQTT password redacted
	SHA256 string `json:"sha256"` // of Board
	Dir    string `json:"dir"`    // the folder its relative paths were read from
}

// NoteReload puts an accepted reload into the node's stream before the
// node stops for it: a recording then holds the board the next node runs,
// and a replay applies it at the same point on its clock.
// cfg is the new board, dir its folder.
func (n *Node) NoteReload(cfg *board.Config, dir string) error {
	c := *cfg
	if c.MQTT.Password != "" { // the stream leaves the robot (MQTT, recordings)
		c.MQTT.Password = "(redacted)"
	}
	y, err := c.Marshal()
	if err != nil {
		return err
	}
	sum := sha256.Sum256(y)
	data, err := json.Marshal(Reloaded{Board: string(y), SHA256: hex.EncodeToString(sum[:]), Dir: dir})
	if err != nil {
		return err
	}
	n.World.Note(worldmodel.Record{Kind: ReloadRecord, Source: "node", Data: data})
	return nil
}
