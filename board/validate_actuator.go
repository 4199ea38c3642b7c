package board

// Actuator blocks: what every block shares is checked here; what depends on
// the kind (pins, I2C, the form of initial) is asked of the kind
// (ActuatorKind), so the board does not know kind names. The limits are the
// kind's: it decodes and checks them when it builds the actuator.

import (
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/internal/registry"
)

// actuatorKind looks the block's kind up; ok is false when no kinds are
// known (then only the shared keys are checked) or the kind is unknown.
func (v *validator) actuatorKind(kind string) (ActuatorKind, bool) {
	if v.kinds == nil {
		return ActuatorKind{}, false
	}
	return v.kinds.Lookup(kind)
}

// kindsWith lists the kinds for which has is true, for messages.
func (v *validator) kindsWith(has func(ActuatorKind) bool) string {
	var out []string
	for _, n := range v.kinds.Names() {
		if k, ok := v.kinds.Lookup(n); ok && has(k) {
			out = append(out, n)
		}
	}
	return strings.Join(out, ", ")
}

func (v *validator) actuator(i int) {
	a := v.c.Actuators[i]
	p := indexPath("actuators", i)
	v.name(p+".name", a.Name)
	k, known := v.actuatorKind(a.Kind)
	switch {
	case a.Kind == "" && v.kinds != nil:
		v.missing(p+".kind", "required: one of %s", strings.Join(v.kinds.Names(), ", "))
	case a.Kind == "":
		v.missing(p+".kind", "required: the actuator kind")
	case !known && v.kinds != nil:
		if elsewhere := registry.Elsewhere(registry.ActuatorKind, a.Kind); elsewhere != "" {
			v.fail(p+".kind", "%s", elsewhere)
			break
		}
		v.fail(p+".kind", "want one of %s", strings.Join(v.kinds.Names(), ", "))
	}
	if known {
		v.actuatorPins(p, a, k)
	}
	v.pinMap(p, a.Pins)
	switch {
	case known && k.I2C && k.Channels > 0:
		if a.Channel < 0 || a.Channel >= k.Channels {
			v.fail(p+".channel", "want 0–%d", k.Channels-1)
		}
		v.i2c(p, a.Bus, a.Address, a.Channel, k.Chip)
	case known && k.I2C:
		if a.Channel != 0 {
			v.failKey(p+".channel", "kind %s has no channels", a.Kind)
		}
		v.i2c(p, a.Bus, a.Address, -1, "")
	case known:
		for _, x := range []struct {
			k   string
			set bool
		}{{"bus", a.Bus != ""}, {"address", a.Address != 0}, {"channel", a.Channel != 0}} {
			if x.set {
				v.failKey(p+"."+x.k, "only used by kind %s", v.kindsWith(func(k ActuatorKind) bool { return k.I2C }))
			}
		}
	}
	for j, s := range a.Scenarios {
		if !slices.Contains(v.c.LLM.Scenarios, s) {
			v.fail(indexPath(p+".scenarios", j), "not one of llm.scenarios")
		}
	}
	if !nameRe.MatchString(a.Permission) {
		v.fail(p+".permission", "must match [a-z][a-z0-9_]*")
	}
	if known && a.Initial != "" && k.Initial != nil {
		if msg := k.Initial(a.Initial); msg != "" {
			v.fail(p+".initial", "%s", msg)
		}
	}
}

// actuatorPins checks the block has exactly the pin roles of its kind.
func (v *validator) actuatorPins(p string, a Actuator, k ActuatorKind) {
	for _, r := range k.Pins {
		if a.Pins[r] == "" {
			v.missing(joinKey(p+".pins", r), "required for kind %s", a.Kind)
		}
	}
	for r := range a.Pins {
		switch {
		case slices.Contains(k.Pins, r):
		case len(k.Pins) == 0 && k.I2C:
			v.failKey(joinKey(p+".pins", r), "kind %s has no pins (it is driven over I2C)", a.Kind)
		case len(k.Pins) == 0:
			v.failKey(joinKey(p+".pins", r), "kind %s has no pins", a.Kind)
		default:
			v.failKey(joinKey(p+".pins", r), "kind %s uses only %s", a.Kind, strings.Join(k.Pins, ", "))
		}
	}
}
