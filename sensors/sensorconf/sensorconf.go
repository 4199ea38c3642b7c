// Package sensorconf turns a board's sensor block into what a sensor kind
// and the threshold wrapper get. The node uses it, and so do tests of sensor
// kinds and `edgeagent wakeword`, so that they see exactly what the runtime
// passes.
package sensorconf

import (
	"errors"
	"fmt"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Of returns the sensor config and thresholds of sc on board b; dir is the
// board file's directory.
func Of(b *board.Config, sc board.Sensor, dir string) (sensors.Config, []sensors.Threshold, error) {
	cfg := sensors.Config{
		Name: sc.Name, Kind: sc.Kind, Platform: b.Device.Platform, Interval: sc.Interval,
		Bus: sc.Bus, Address: uint16(sc.Address), Pins: sc.Pins, Decode: sc.Options.Decode, Dir: dir,
		Broker: b.MQTT.DialURL(),
	}
	if sc.Priority != "" {
		p, err := worldmodel.ParsePriority(sc.Priority)
		if err != nil {
			return cfg, nil, fmt.Errorf("sensor %q: %w", sc.Name, err)
		}
		cfg.Priority = &p
	}
	var limits []sensors.Threshold
	var errs []error
	for _, t := range sc.Thresholds {
		th := sensors.Threshold{Quantity: t.Quantity, Above: t.Above, Below: t.Below, Change: t.Change,
			Hysteresis: t.Hysteresis, Priority: worldmodel.High, Event: t.Event}
		if t.Priority != "" {
			p, err := worldmodel.ParsePriority(t.Priority)
			if err != nil {
				errs = append(errs, fmt.Errorf("sensor %q threshold on %q: %w", sc.Name, t.Quantity, err))
				continue
			}
			th.Priority = p
		}
		if err := th.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("sensor %q threshold on %q: %w", sc.Name, t.Quantity, err))
			continue
		}
		limits = append(limits, th)
	}
	return cfg, limits, errors.Join(errs...)
}
