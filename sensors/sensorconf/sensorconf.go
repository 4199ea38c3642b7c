// Package sensorconf turns a board's sensor block into what a sensor kind
// and the threshold wrapper get. The node uses it, and so do tests of sensor
// kinds and `edgeagent wakeword`, so that they see exactly what the runtime
// passes.
package sensorconf

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Of returns the sensor config and thresholds of sc on board b; dir is the
// board file's directory. Its errors, as sensors.New's, name keys of the
// block: Locate places them in the file.
func Of(b *board.Config, sc board.Sensor, dir string) (sensors.Config, []sensors.Threshold, error) {
	cfg := sensors.Config{
		Name: sc.Name, Kind: sc.Kind, Platform: b.Device.Platform, Interval: sc.Interval,
		Bus: sc.Bus, Address: uint16(sc.Address), Pins: sc.Pins, Decode: sc.Options.Decode, Dir: dir,
		Broker: b.MQTT.DialURL(),
	}
	if sc.Priority != "" {
		p, err := worldmodel.ParsePriority(sc.Priority)
		if err != nil {
			return cfg, nil, fmt.Errorf("priority: %w", err)
		}
		cfg.Priority = &p
	}
	var limits []sensors.Threshold
	var errs []error
	for i, t := range sc.Thresholds {
		th := sensors.Threshold{Quantity: t.Quantity, Above: t.Above, Below: t.Below, Change: t.Change,
			Hysteresis: t.Hysteresis, Priority: worldmodel.High, Event: t.Event}
		if t.Priority != "" {
			p, err := worldmodel.ParsePriority(t.Priority)
			if err != nil {
				errs = append(errs, fmt.Errorf("thresholds[%d].priority: %w", i, err))
				continue
			}
			th.Priority = p
		}
		if err := th.Validate(); err != nil {
			errs = append(errs, sensors.Under(fmt.Sprintf("thresholds[%d]", i), err)...)
			continue
		}
		limits = append(limits, th)
	}
	return cfg, limits, errors.Join(errs...)
}

// Locate puts each of err's errors about sensor block i of b (from Of,
// sensors.New) at its key in the board file: "options.channels[0].input:
// not one of …" at sensors[i].options.channels[0].input's file:line:col,
// an error that names no key at the block. One the loader placed already
// is kept as it is.
func Locate(b *board.Config, i int, err error) error {
	var out []error
	block := fmt.Sprintf("sensors[%d]", i)
	for _, e := range sensors.Leaves(err) {
		if _, placed := errors.AsType[*board.Error](e); placed {
			out = append(out, e)
			continue
		}
		path, msg := block, e.Error()
		if key, rest, ok := strings.Cut(msg, ": "); ok && keyPath.MatchString(key) {
			path, msg = block+"."+key, rest
		}
		out = append(out, b.KeyError(path, "%s", msg))
	}
	return errors.Join(out...)
}

// keyPath is a key path below a block: names and indices, no spaces.
var keyPath = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\[\d+\])*(\.[a-z0-9_]+(\[\d+\])*)*$`)
