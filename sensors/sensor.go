// Package sensors is the contract every sensor kind implements and the
// registry of kinds. A kind registers a Factory from its package's init,
// like database/sql drivers; the board config names kinds, and the runtime
// builds one Sensor per config block.
package sensors

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/registry"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Sensor produces observations and events until its context ends.
// Run reconnects to its device on its own (with backoff) and returns only
// when ctx is done or on an unrecoverable configuration error.
type Sensor interface {
	Name() string
	Run(ctx context.Context, out Sink) error
}

// Sink receives what sensors produce. Neither method blocks.
type Sink interface {
	Observe(worldmodel.Observation)
	Raise(worldmodel.Event) // priority event: recorded and sent to the interrupt bus
}

// Watcher is implemented by a Sink that knows whether some consumer
// watches a source (the node's sink asks the world model). A sensor uses it
// to produce a costly source — a camera's live JPEG frames — only while it
// is watched; a Sink without it watches nothing.
type Watcher interface{ Watched(source string) bool }

// Config is one sensor block of the board config as a kind sees it.
type Config struct {
	Name     string        // unique per board; prefix of the sensor's sources
	Kind     string        // registry key
	Platform string        // "raspi", "jetson" or "sim"
	Interval time.Duration // sampling interval (0: the kind's default)
	Bus      string        // I2C bus name or number, if any
	Address  uint16        // I2C address, if any
	Pins     map[string]string
	// Priority of the sensor's primary event (motion start, wake word,
	// button press) when the board sets one; nil keeps the kind's default.
	// Safety events (e-stop) are Critical whatever the board says.
	Priority *worldmodel.Priority
	// Decode strictly decodes the block's kind-specific "options" into v
	// (a pointer to the kind's Opts struct). Unknown keys and wrong types
	// are errors naming file:line:col. A nil Decode decodes nothing.
	Decode func(v any) error
	// Dir is the directory of the board config file, for relative paths.
	Dir string
	// Broker is the robot's own MQTT broker as a client on this machine
	// reaches it (tcp://127.0.0.1:1883 for the embedded one), for kinds
	// that read from it; "" when the board has none.
	Broker string
	// Clock is the run's time source (nil: the wall clock): a kind paces
	// its sampling, retries and waits on it and stamps what it observes
	// with it, so a test drives it step by step. A device that keeps its
	// own time (a sound card's callback, a camera's frame rate) keeps it;
	// only its stamps come from the clock.
	Clock clock.Clock
}

// PriorityOr returns the board's priority for the primary event, or def.
func (c Config) PriorityOr(def worldmodel.Priority) worldmodel.Priority {
	if c.Priority != nil {
		return *c.Priority
	}
	return def
}

// File resolves a file named in the block's options: a relative path is
// read from the board file's folder (Dir), so a board moves with its files.
// A file that is not there is an error now, so that `edgeagent check`
// fails on the path `run` would not find. The error does not repeat the
// path (it is in the board file, at the key the caller names).
func (c Config) File(p string) (string, error) {
	if p != "" && !filepath.IsAbs(p) {
		p = filepath.Join(c.Dir, p)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		dir, _ := filepath.Abs(c.Dir) // the folder, not a value from the file
		return p, fmt.Errorf("no such file (relative paths are read from the board file's folder, %s)", dir)
	case st.IsDir():
		return p, errors.New("a folder, not a file")
	}
	return p, nil
}

// DecodeOptions calls c.Decode when set.
func (c Config) DecodeOptions(v any) error {
	if c.Decode == nil {
		return nil
	}
	return c.Decode(v)
}

// Factory builds a sensor from its config block. It validates options but
// must not open devices: that happens in Run, so that `edgeagent check`
// works on a machine without the hardware.
type Factory func(cfg Config) (Sensor, error)

// Watched is a source a kind produces only while a consumer watches it
// (worldmodel.Model.Watch) and that is costly to keep: a camera's live
// JPEG frames, a microphone's audio chunks. Size is the ring its items
// need unless the board sets one: each held item is kept alive.
type Watched struct {
	Suffix string // after the sensor's name: ".live" makes "<name>.live"
	Size   int
}

type kind struct {
	factory Factory
	watched []Watched
}

var kinds = registry.New[kind](registry.SensorKind)

// Register makes a sensor kind available, with the costly sources it
// produces while watched. It panics on a duplicate kind, as that is a
// programming error.
func Register(name string, f Factory, watched ...Watched) {
	kinds.Register(name, kind{factory: f, watched: watched})
}

// WatchedSources are the costly sources a kind declared, for the world
// model's ring sizes; none for an unknown kind.
func WatchedSources(kindName string) []Watched {
	k, _ := kinds.Lookup(kindName)
	return k.watched
}

// New builds a sensor of a registered kind. Its errors name keys of the
// sensor block, never values from it (errors.go); sensorconf.Locate puts
// them at their place in the board file.
func New(cfg Config) (Sensor, error) {
	k, ok := kinds.Lookup(cfg.Kind)
	if !ok {
		return nil, fmt.Errorf("kind: %s", kinds.Missing(cfg.Kind))
	}
	return k.factory(cfg)
}

// Kinds lists the registered kinds, sorted.
func Kinds() []string { return kinds.Names() }
