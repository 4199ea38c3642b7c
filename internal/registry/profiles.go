package registry

import (
	"fmt"
	"strings"
	"sync"
)

// What the project's registries hold: their names in messages and the keys
// of the profile table.
const (
	SensorKind   = "sensor kind"
	ActuatorKind = "actuator kind"
	Plugin       = "plugin"
	Command      = "command" // cmd/edgeagent's commands, which are no registry
)

// Build profiles: cmd/edgeagent is built in profiles (build tags, as
// Telegraf's custom builds choose their inputs) that hold different kinds,
// plugins and commands. A binary is told its own profile and the generated
// table of what every profile holds, so that a board naming a kind this
// binary lacks hears which profile has it instead of "unknown".
var profiles struct {
	sync.RWMutex
	this  string
	holds func(what, name string) []string
}

// UseProfiles says which profile this binary is and, for a registry's what
// (SensorKind) and a name, which profiles hold it (none: no profile).
func UseProfiles(this string, holds func(what, name string) []string) {
	profiles.Lock()
	defer profiles.Unlock()
	profiles.this, profiles.holds = this, holds
}

// Elsewhere explains a name of what that this binary lacks but another
// build profile holds, or returns "" (no profiles known, or no profile
// holds it: a plain unknown name).
func Elsewhere(what, name string) string {
	profiles.RLock()
	defer profiles.RUnlock()
	if profiles.holds == nil {
		return ""
	}
	in := profiles.holds(what, name)
	if len(in) == 0 {
		return ""
	}
	return fmt.Sprintf("not in this binary (build profile %s); build profile %s has it", profiles.this, strings.Join(in, ", "))
}

// Missing says why name is not registered, for an error message: in which
// other profile it is, or which names this registry knows.
func (r *Registry[T]) Missing(name string) string {
	if e := Elsewhere(r.what, name); e != "" {
		return e
	}
	return fmt.Sprintf("unknown (known: %s)", strings.Join(r.Names(), ", "))
}
