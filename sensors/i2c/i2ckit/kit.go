// Package i2ckit is the plumbing every I²C sensor kind shares: bringing up
// periph's host drivers, opening the sensor's bus (a real /dev/i2c-N, or
// the simulated bus on the sim board), and the sampling loop that turns a
// NACKing or vanished device into a degraded sensor, retries it with
// backoff and recovers by itself. A kind only says how to open its device
// and how to read one sample.
package i2ckit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"github.com/edgeagent/edgeagent/sensors/periphhost"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/i2c/i2creg"
)

// OpenBus opens the bus a sensor is on: the process-wide simulated bus of
// that name on platform "sim", otherwise the host's bus by number or name
// through periph's i2creg ("1" is /dev/i2c-1).
func OpenBus(cfg sensors.Config) (i2c.BusCloser, error) {
	if cfg.Platform == "sim" {
		return i2csim.Shared(simBusName(cfg.Bus)), nil
	}
	if err := periphhost.Init(); err != nil {
		return nil, err
	}
	b, err := i2creg.Open(cfg.Bus)
	if err != nil {
		return nil, fmt.Errorf("open I2C bus %q: %w (is I2C enabled and is the user in the i2c group?)", cfg.Bus, err)
	}
	return b, nil
}

func simBusName(bus string) string {
	if bus == "" {
		return "sim"
	}
	return bus
}

// Device is one opened sensor device: a periph driver bound to the bus.
type Device interface {
	// Sample reads the device once and emits its readings.
	Sample(ctx context.Context, e *Emitter) error
	// Close stops the device (periph's Halt) and releases it.
	Close() error
}

// Driver is a Device made of a periph driver and the kind's functions that
// read it once and stop it, for a kind whose device keeps no state of its
// own beside the driver.
type Driver[D any] struct {
	Dev  D
	Read func(ctx context.Context, dev D, e *Emitter) error
	Halt func(dev D) error // nil: nothing to stop
}

// Sample implements Device.
func (d Driver[D]) Sample(ctx context.Context, e *Emitter) error { return d.Read(ctx, d.Dev, e) }

// Close implements Device.
func (d Driver[D]) Close() error {
	if d.Halt == nil {
		return nil
	}
	return d.Halt(d.Dev)
}

// Loop runs one I²C sensor.
type Loop struct {
	Cfg      sensors.Config
	Interval time.Duration   // used when Cfg.Interval is 0
	Min      time.Duration   // shortest interval the device supports (0: none)
	Backoff  sensors.Backoff // zero value: sensors.DefaultBackoff
	// Open binds a fresh driver to the bus. It is called again after every
	// fault: a device that lost power has lost its configuration, and only
	// a new driver writes it again.
	Open func(ctx context.Context, bus i2c.Bus) (Device, error)
	// Sim builds the simulated device for platform "sim", with its
	// scheduled faults.
	Sim func() (i2csim.Device, []i2csim.FaultWindow, error)
}

// Name implements sensors.Sensor.
func (l *Loop) Name() string { return l.Cfg.Name }

func (l *Loop) interval() time.Duration {
	iv := l.Cfg.Interval
	if iv <= 0 {
		iv = l.Interval
	}
	if iv <= 0 {
		iv = time.Second
	}
	return max(iv, l.Min)
}

// Run implements sensors.Sensor: it samples at the interval, on the
// config's clock, until ctx ends, marking the sensor degraded on any bus
// error and retrying.
func (l *Loop) Run(ctx context.Context, out sensors.Sink) error {
	clk := clock.Or(l.Cfg.Clock)
	if l.Cfg.Platform == "sim" {
		detach, err := l.attachSim(clk)
		if err != nil {
			return err
		}
		defer detach()
	}
	h := sensors.NewHealth(clk, l.Cfg.Name, out, worldmodel.Normal)
	em := &Emitter{out: out}
	iv := l.interval()
	if l.Cfg.Interval > 0 && iv > l.Cfg.Interval {
		slog.Info("sensor interval raised to what the device supports", "sensor", l.Cfg.Name, "kind", l.Cfg.Kind, "configured", l.Cfg.Interval, "used", iv)
	}
	return sensors.Supervise(ctx, h, l.Backoff, func(ctx context.Context) error {
		bus, err := OpenBus(l.Cfg)
		if err != nil {
			return err
		}
		defer bus.Close()
		dev, err := l.Open(ctx, bus)
		if err != nil {
			return fmt.Errorf("init %s at %s: %w", l.Cfg.Kind, addrString(l.Cfg.Address), err)
		}
		defer dev.Close()
		t := clk.NewTicker(iv)
		defer t.Stop()
		for {
			em.now = clk.Now()
			if err := dev.Sample(ctx, em); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			h.OK()
			select {
			case <-ctx.Done():
				return nil
			case <-t.C():
			}
		}
	})
}

// attachSim puts the kind's simulated device on the shared sim bus, living
// on clk. Two sim sensors configured at one address is a configuration
// error, as it would be on a real bus.
func (l *Loop) attachSim(clk clock.Clock) (func(), error) {
	if l.Sim == nil {
		return nil, sensors.Permanent(errors.New("kind has no simulated device"))
	}
	dev, faults, err := l.Sim()
	if err != nil {
		return nil, err
	}
	bus := i2csim.Shared(simBusName(l.Cfg.Bus))
	if err := bus.AttachTimed(l.Cfg.Address, dev, clk.Now); err != nil {
		return nil, err
	}
	if len(faults) > 0 {
		if err := bus.ScheduleFaults(l.Cfg.Address, faults); err != nil {
			bus.Detach(l.Cfg.Address)
			return nil, err
		}
	}
	return func() { bus.Detach(l.Cfg.Address) }, nil
}

func addrString(a uint16) string { return "0x" + strconv.FormatUint(uint64(a), 16) }

// Emitter hands a sample's readings to the sink with one timestamp.
type Emitter struct {
	out sensors.Sink
	now time.Time
}

// Reading emits a numeric reading. source is "<sensor>.<quantity>";
// kinds build these strings once, not per sample.
func (e *Emitter) Reading(source string, v float64, unit string) {
	e.out.Observe(worldmodel.Observation{Time: e.now, Source: source, Kind: worldmodel.Reading, Value: v, Unit: unit})
}

// NewEmitter returns an Emitter for out that stamps readings with now, for
// benchmarks and tests that call a Device directly.
func NewEmitter(out sensors.Sink, now time.Time) *Emitter { return &Emitter{out: out, now: now} }

// Address returns cfg.Address, or def when the block has none.
func Address(cfg sensors.Config, def uint16) uint16 {
	if cfg.Address == 0 {
		return def
	}
	return cfg.Address
}
