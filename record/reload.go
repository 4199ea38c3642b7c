package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// ReloadRecord is the kind of the record NoteReload writes.
const ReloadRecord = "reload"

// Reloaded is a ReloadRecord's data.
type Reloaded struct {
	Board  string `json:"board"`  // the new board as YAML (Marshal), the MQTT password redacted
	SHA256 string `json:"sha256"` // of Board
	Dir    string `json:"dir"`    // the folder its relative paths were read from
}

// Noter is the part of a node's world model NoteReload writes to.
type Noter interface {
	Note(worldmodel.Record) worldmodel.Record
}

// NoteReload puts an accepted reload into a node's stream (w) before the
// node stops for it: a recording then holds the board the next node runs,
// and a replay applies it at the same point on its clock.
// cfg is the new board, dir its folder.
func NoteReload(w Noter, cfg *board.Config, dir string) error {
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
	w.Note(worldmodel.Record{Kind: ReloadRecord, Source: "node", Data: data})
	return nil
}
