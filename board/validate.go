package board

import (
	"regexp"
	"slices"
	"strings"
)

var (
	deviceIDRe = regexp.MustCompile(`^[a-z0-9_-]+$`)
	nameRe     = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	toolRe     = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)
	bcryptRe   = regexp.MustCompile(`^\$2[abxy]?\$[0-9]{2}\$[./A-Za-z0-9]{53}$`)
)

var (
	platforms  = []string{"raspi", "jetson", "sim"}
	logLevels  = []string{"debug", "info", "warn", "error"}
	logFormats = []string{"text", "json"}
	priorities = []string{"critical", "high", "normal", "low"}
)

type validator struct {
	*decoder
	c      *Config
	file   string
	hdr    header
	hasHdr bool // hdr is the table of a raspi/jetson model

	names   map[string]string  // sensor/actuator name -> path of first use
	pins    map[string]string  // header pin -> path of first use
	buses   map[string]string  // I2C bus in use -> path of first use
	devices map[string]*i2cUse // "bus/addr" -> its users
	kinds   ActuatorKinds      // nil: actuator kinds are not checked
}

func (v *validator) fail(path, format string, args ...any) {
	v.errorf(v.at(path), path, format, args...)
}

// missing reports a required key that is absent, at its parent's key when
// there is one (the line a reader would add it under).
func (v *validator) missing(path, format string, args ...any) {
	p, ok := v.where[path]
	if !ok {
		if q, ok := v.keyAt[parentPath(path)]; ok {
			p = q
		} else {
			p = v.at(path)
		}
	}
	v.errorf(p, path, format, args...)
}

// failKey reports a key that should not be there, at the key itself.
func (v *validator) failKey(path, format string, args ...any) {
	p, ok := v.keyAt[path]
	if !ok {
		p = v.at(path)
	}
	v.errorf(p, path, format, args...)
}

func comparePos(a, b pos) int {
	if a.line != b.line {
		return a.line - b.line
	}
	return a.col - b.col
}

func (v *validator) line(path string) int { return v.at(path).line }

func oneOf(s string, set []string) bool { return slices.Contains(set, s) }

func (v *validator) enum(path, val string, set []string) {
	if !oneOf(val, set) {
		v.fail(path, "want one of %s", strings.Join(set, ", "))
	}
}

func (v *validator) validate() {
	v.names = map[string]string{}
	v.pins = map[string]string{}
	v.buses = map[string]string{}
	v.devices = map[string]*i2cUse{}
	c := v.c

	v.device()
	v.enum("log.level", c.Log.Level, logLevels)
	v.enum("log.format", c.Log.Format, logFormats)
	v.mqtt()
	v.llm()
	v.agent()
	v.world()
	v.permissions()
	v.fleet()

	// Buses first: a GPIO pin on an I2C line is only wrong if the bus is
	// used, whichever block comes first in the file.
	for i, s := range c.Sensors {
		if s.Bus != "" {
			v.useBus(indexPath("sensors", i)+".bus", s.Bus)
		}
	}
	for i, a := range c.Actuators {
		if k, ok := v.actuatorKind(a.Kind); ok && k.I2C && a.Bus != "" {
			v.useBus(indexPath("actuators", i)+".bus", a.Bus)
		}
	}
	// Visit sensor and actuator blocks in file order, so that a duplicate
	// name, pin or address is reported on the later block and names the
	// earlier one.
	type block struct {
		at    pos
		check func()
	}
	var blocks []block
	for i := range c.Sensors {
		blocks = append(blocks, block{v.at(indexPath("sensors", i)), func() { v.sensor(i) }})
	}
	for i := range c.Actuators {
		blocks = append(blocks, block{v.at(indexPath("actuators", i)), func() { v.actuator(i) }})
	}
	slices.SortStableFunc(blocks, func(a, b block) int { return comparePos(a.at, b.at) })
	for _, b := range blocks {
		b.check()
	}
	for i := range c.Reflexes {
		v.reflex(i)
	}
	for name := range c.Plugins {
		if !nameRe.MatchString(name) {
			// At the key, not by it: the path would repeat what the file says.
			v.errorf(v.keyAt[joinKey("plugins", name)], "plugins", "a plugin name (the key here) must match [a-z][a-z0-9_]*")
		}
	}
}

// name checks a sensor or actuator name; the two share one namespace.
func (v *validator) name(path, name string) {
	switch first, dup := v.names[name]; {
	case name == "":
		v.missing(path, "required")
	case !nameRe.MatchString(name):
		v.fail(path, "must match [a-z][a-z0-9_]* (it prefixes world-model sources and tool names)")
	case dup:
		v.fail(path, "this name is taken (first used by %s at line %d; sensors and actuators share names)", parentPath(first), v.line(first))
	default:
		v.names[name] = path
	}
}

func (v *validator) priority(path, p string) {
	if p != "" {
		v.enum(path, p, priorities)
	}
}
