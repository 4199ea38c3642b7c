package board

// Sensor and reflex blocks.

import (
	"slices"
	"strings"
)

func (v *validator) sensor(i int) {
	s := v.c.Sensors[i]
	p := indexPath("sensors", i)
	v.name(p+".name", s.Name)
	if s.Kind == "" {
		v.missing(p+".kind", "required: the sensor kind (e.g. bme280, camera, pir)")
	}
	if s.Interval < 0 {
		v.fail(p+".interval", "must not be negative")
	}
	if s.Telemetry < 0 {
		v.fail(p+".telemetry", "must not be negative")
	}
	v.priority(p+".priority", s.Priority)
	v.i2c(p, s.Bus, s.Address, -1, "")
	v.pinMap(p, s.Pins)
	for j, t := range s.Thresholds {
		tp := indexPath(p+".thresholds", j)
		if t.Quantity == "" {
			v.missing(tp+".quantity", "required: which reading (e.g. temperature)")
		}
		n := 0
		for _, b := range []*float64{t.Above, t.Below, t.Change} {
			if b != nil {
				n++
			}
		}
		if n != 1 {
			v.missing(tp, "needs exactly one of above, below, change (found %d)", n)
		}
		if t.Change != nil && *t.Change <= 0 {
			v.fail(tp+".change", "must be positive")
		}
		if t.Hysteresis < 0 {
			v.fail(tp+".hysteresis", "must not be negative")
		}
		if t.Priority == "" {
			v.fail(tp+".priority", "must not be empty")
		}
		v.priority(tp+".priority", t.Priority)
		if !nameRe.MatchString(t.Event) {
			v.fail(tp+".event", "must match [a-z][a-z0-9_]*")
		}
	}
}

func (v *validator) reflex(i int) {
	r := v.c.Reflexes[i]
	p := indexPath("reflexes", i)
	parts := strings.Split(r.On, "/")
	switch {
	case r.On == "":
		v.missing(p+".on", "required: an event kind (motion_start) or source/kind (front_cam/motion_start)")
	case len(parts) > 2 || slices.Contains(parts, "") || strings.ContainsAny(r.On, " \t"):
		v.fail(p+".on", "expected <kind> or <source>/<kind>")
	}
	switch {
	case r.Do.Tool == "":
		v.missing(p+".do.tool", "required: the tool to call, e.g. headlight.set")
	case !toolRe.MatchString(r.Do.Tool):
		v.fail(p+".do.tool", "not a tool name (plugin.func)")
	}
	if r.Cooldown < 0 {
		v.fail(p+".cooldown", "must not be negative")
	}
}
