package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/tools"
)

func init() {
	plugin.Register("recorder", func(h plugin.Host) (hooks.Plugin, error) { return newPlugin(h) })
}

// recorderPlugin makes the Recorder a plugin: its options come from the
// board's `record:` section, it is started and stopped with the agent, and
// record.start / record.stop / record.status administer it.
type recorderPlugin struct {
	r   *Recorder
	dir string // where rotating files and named files go

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func newPlugin(h plugin.Host) (*recorderPlugin, error) {
	b := h.Board()
	o := DefaultOptions()
	if err := b.Record.Decode(&o); err != nil {
		return nil, err
	}
	dir := o.Dir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(b.DataDir, dir)
	}
	// The board is printed when the first recording file is made, not
	// here: printing it and finding the files it names was a fifth of the
	// agent's start-up CPU, and a robot that never records never needs it.
	printed := sync.OnceValues(func() ([]byte, []Attachment) {
		y, files, err := portableBoard(b, h.Dir())
		if err != nil {
			h.Log().Warn("recorder: the board config could not be printed; the recording has none", "err", err)
		}
		return y, files
	})
	st := newFileState(h.Log().With("plugin", "recorder"))
	header := func() Header {
		meta := BuildInfo()
		meta["device"], meta["platform"] = b.Device.ID, b.Device.Platform
		meta["started"] = h.Clock().Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")
		y, files := printed()
		// The files are read as each recording file is written, not
		// kept: the recorder holds no copy in memory.
		return Header{Meta: meta, Board: y, Files: files, AttachMax: o.AttachMaxBytes, files: st}
	}
	r, err := New(h.World(), o, h.Clock(), h.Log().With("plugin", "recorder"), b.Device.ID, header)
	if err != nil {
		return nil, err
	}
	for _, s := range b.Sensors {
		if s.Kind == "mic" { // spelled out: the recorder does not import drivers
			r.audio = append(r.audio, s.Name+".audio")
		}
	}
	r.files = st
	p := &recorderPlugin{r: r, dir: dir}
	if o.Enabled {
		r.StartDir(dir)
	}
	return p, nil
}

// portableBoard is the board as a recording carries it: its secrets
// redacted, and the files it names as attachments (BoardFiles).
func portableBoard(b *board.Config, dir string) ([]byte, []Attachment, error) {
	c := *b
	if c.MQTT.Password != "" { // a recording is shared more widely than the board file
		c.MQTT.Password = "(redacted)"
	}
	y, err := c.Marshal()
	if err != nil {
		return nil, nil, err
	}
	return BoardFiles(y, dir)
}

// BuildInfo describes the running binary for a recording's metadata.
func BuildInfo() map[string]string {
	m := map[string]string{"go": runtime.Version(), "version": "(unknown)"}
	if bi, ok := debug.ReadBuildInfo(); ok {
		m["version"] = bi.Main.Version
		for _, s := range bi.Settings {
			if name, ok := strings.CutPrefix(s.Key, "vcs."); ok {
				m[name] = s.Value
			}
		}
	}
	return m
}

func (p *recorderPlugin) Info() hooks.Info {
	return hooks.Info{Name: "recorder", Version: "1", Description: "records the agent's stream as MCAP files"}
}

// RecordFile records into one file from the start (`run --record FILE`).
func (p *recorderPlugin) RecordFile(path string) { p.r.StartFile(path) }

// HandOver keeps the recording open for the node that replaces this one
// after a reload (Recorder.HandOver); nil when it is not recording.
func (p *recorderPlugin) HandOver() *Continuation { return p.r.HandOver() }

// TakeOver records on into the file c hands over (Continuation.To).
func (p *recorderPlugin) TakeOver(c *Continuation) bool { return c.To(p.r) }

// Through is how far the stream is written (see Recorder.Through).
func (p *recorderPlugin) Through() uint64 { return p.r.Through() }

// Status is the recorder component of agent.status.
func (p *recorderPlugin) Status() any { return p.r.Status() }

func (p *recorderPlugin) OnAgentStart(context.Context) error {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	p.mu.Lock()
	p.cancel, p.done = cancel, done
	p.mu.Unlock()
	go func() { defer close(done); p.r.Run(ctx) }()
	return nil
}

// OnAgentStop completes the open file with what is queued. A disk that
// does not answer before ctx ends leaves the file as it is on the disk
// (readable up to its last complete chunk).
func (p *recorderPlugin) OnAgentStop(ctx context.Context) error {
	p.mu.Lock()
	cancel, done := p.cancel, p.done
	p.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("recorder: the disk did not take the last messages in time")
	}
}

var nameRE = `^[A-Za-z0-9][A-Za-z0-9._-]{0,99}[.]mcap$`

func (p *recorderPlugin) Tools() []tools.Tool {
	type startArgs struct {
		Name string `json:"name"`
	}
	return []tools.Tool{
		tools.Typed(tools.Spec{Name: "record.start", Permission: "admin",
			Description: "Start recording the agent (MCAP): into rotating files in the record directory, or into one file of that directory given by name.",
			Params: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","pattern":"` + nameRE +
				`","description":"a file name in the record directory, e.g. incident.mcap; omit for rotating files"}},"additionalProperties":false}`)},
			func(_ context.Context, a startArgs) (tools.Result, error) {
				if a.Name == "" {
					p.r.StartDir(p.dir)
					return tools.Result{Value: map[string]any{"recording": true, "dir": p.dir}}, nil
				}
				path := filepath.Join(p.dir, a.Name)
				if fileExists(path) {
					return tools.Result{}, &tools.Error{Code: tools.CodeRefused, Msg: fmt.Sprintf("record.start: %s already exists", a.Name)}
				}
				p.r.StartFile(path)
				return tools.Result{Value: map[string]any{"recording": true, "file": path}}, nil
			}),
		tools.Func(tools.Spec{Name: "record.stop", Permission: "admin", Description: "Stop recording; the file is completed.",
			Params: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
			func(context.Context, json.RawMessage) (tools.Result, error) {
				p.r.Stop()
				return tools.Result{Value: map[string]any{"recording": false}}, nil
			}),
		tools.Func(tools.Spec{Name: "record.status", Permission: "read", Description: "What the recorder is writing and what it dropped.",
			Params: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
			func(context.Context, json.RawMessage) (tools.Result, error) {
				return tools.Result{Value: p.r.Status()}, nil
			}),
	}
}
