package actuators

import (
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

// The board does not know actuator kinds and the actuator package does not
// read board files: this file is the bridge. It tells the board what each
// registered kind takes (so a mistake is reported at load time with
// file:line:col) and turns board blocks into the actuator package's Config,
// whose options and limits the kind decodes itself, with their positions.

func init() { board.UseActuatorKinds(boardKinds{}) }

// boardKinds shows the actuator registry to the board. It looks kinds up
// when a board is parsed, so kinds registered by any package's init count,
// whatever the init order.
type boardKinds struct{}

func (boardKinds) Names() []string { return actuator.Kinds() }

func (boardKinds) Lookup(name string) (board.ActuatorKind, bool) {
	k, ok := actuator.Lookup(name)
	if !ok {
		return board.ActuatorKind{}, false
	}
	return board.ActuatorKind{
		Pins: k.Pins, I2C: k.I2C, Address: board.Addr(k.Address), Channels: k.Channels, Chip: k.Chip,
		Initial: k.Initial,
	}, true
}

// Configs translates the board's actuator blocks.
func Configs(blocks []board.Actuator) []actuator.Config {
	out := make([]actuator.Config, len(blocks))
	for i, a := range blocks {
		out[i] = actuator.Config{
			Name: a.Name, Kind: a.Kind, Pins: a.Pins,
			Bus: a.Bus, Address: uint16(a.Address), Channel: a.Channel,
			Scenarios: a.Scenarios, Permission: a.Permission, Initial: a.Initial,
			Decode:       a.Options.Decode,
			BadOptionAt:  func(key, msg string) error { return a.Options.Errorf(key, "%s", msg) },
			DecodeLimits: a.Limits.Decode,
			BadLimitAt:   func(key, msg string) error { return a.Limits.Errorf(key, "%s", msg) },
		}
	}
	return out
}
