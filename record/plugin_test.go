package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/nodetest"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"

	_ "github.com/edgeagent/edgeagent/record"
	_ "github.com/edgeagent/edgeagent/sensors/mic"
)

// The admin tools start and stop a recording in a running agent; the file
// holds the board and what happened in between.
func TestRecordStartStopTools(t *testing.T) {
	n := nodetest.New(t, "plugins: {mqtt: {enabled: false}}\nrecord: {dir: rec, flush_every: 1m}\n")
	stop := nodetest.Run(t, n)
	call := func(tool string, params string) (tools.Result, error) {
		return n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: tool, Params: json.RawMessage(params)})
	}
	if _, err := call("record.start", `{"name":"../escape.mcap"}`); err == nil {
		t.Fatal("a name with a path was accepted")
	}
	if _, err := call("record.start", `{"name":"incident.mcap"}`); err != nil {
		t.Fatal(err)
	}
	n.World.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: 21.5})
	path := filepath.Join(n.Board.DataDir, "rec", "incident.mcap")
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		res, err := call("record.status", `{}`)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := json.Marshal(res.Value); strings.Contains(string(b), `"written":`) && !strings.Contains(string(b), `"written":0`) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("nothing written")
		}
	}
	if _, err := call("record.stop", `{}`); err != nil {
		t.Fatal(err)
	}
	var in *recording.Info
	var err error
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		if in, err = recording.Read(path, nil); err == nil && in.Complete {
			break
		}
		if time.Now().After(end) {
			t.Fatalf("the file was not completed: %v", err)
		}
	}
	board, err := n.Board.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if in.Channel("/obs/env.temperature") == nil || !bytes.Equal(in.Attachments["board.yaml"], board) {
		t.Errorf("channels %v, board %q, want the node's %q", in.Channels, in.Attachments["board.yaml"], board)
	}
	stop()
}

func TestRecordOptionsAreStrict(t *testing.T) {
	// The unknown key with its position.
	nodetest.Refused(t, "record: {dir: rec, compresion: zstd}\n", "t.yaml:3:20: record.compresion: unknown key")
	nodetest.Refused(t, "record: {compression: brotli}\n", "want lz4 or zstd")
}

// With record.audio the microphone's audio around speech is in the file:
// the sim microphone says "hey robot" once, and the recording holds that
// (with the pre-roll and the tail), not the room noise around it. Without
// it, no audio at all.
func TestRecordsAudioAroundSpeech(t *testing.T) {
	speech, err := filepath.Abs("../sensors/mic/testdata/speech/pos/enrolled_a.wav")
	if err != nil {
		t.Fatal(err)
	}
	for _, audio := range []bool{true, false} {
		n := nodetest.New(t, fmt.Sprintf(`plugins: {mqtt: {enabled: false}}
record: {dir: rec, audio: %v}
sensors:
  - name: mic
    kind: mic
    interval: 100ms
    options:
      source: sim
      sim: {noise: pink, noise_dbfs: -60, period: 0s, utterances: [{file: %q, at: 1s}]}
      wakeword: {detector: off}
`, audio, speech))
		path := filepath.Join(t.TempDir(), "run.mcap")
		rec, ok := node.Find[interface{ RecordFile(string) }](n)
		if !ok {
			t.Fatal("no recorder")
		}
		rec.RecordFile(path)
		stop := nodetest.Run(t, n)
		time.Sleep(4 * time.Second) // the phrase (~1 s) at 1 s, and the tail
		stop()
		var samples int
		in, err := recording.Read(path, func(m recording.Msg) error {
			if m.Channel.Topic != "/audio/mic.audio" {
				return nil
			}
			var a struct {
				MIME string `json:"mime"`
				Data []byte `json:"data"`
			}
			if err := json.Unmarshal(m.Data, &a); err != nil || a.MIME != "audio/L16;rate=16000;channels=1" {
				return fmt.Errorf("audio message %s: %v", a.MIME, err)
			}
			samples += len(a.Data) / 2
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		secs := float64(samples) / 16000
		t.Logf("audio: %v, %.2f s of audio recorded in a %v run", audio, secs, in.Duration().Round(time.Millisecond))
		switch {
		case !audio && in.Channel("/audio/mic.audio") != nil:
			t.Fatal("audio recorded without record.audio")
		case audio && (secs < 0.8 || secs > 2.5):
			t.Fatalf("%.2f s of audio: want the phrase with its pre-roll and tail (1–2 s), not the whole run", secs)
		}
	}
}
