package sensors

import (
	"fmt"
	"strings"
)

// A kind's configuration errors name the key they are about, relative to
// the sensor block ("options.channels[1].input: not one of 0, 1, 2, 3"),
// and never the value written there: the node puts each at that key's
// file:line:col (sensorconf.Locate), and a value from the file (a device
// path, a secret) must not travel with a refusal.

// Leaves is err's errors one by one: a join's (recursively), or err.
func Leaves(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Leaves(e)...)
	}
	return out
}

// Under puts each of err's errors under the key path prefix ("options.",
// "options.motion."): "threshold: want 1..255" becomes
// "options.motion.threshold: want 1..255".
func Under(prefix string, err error) []error {
	var out []error
	for _, e := range Leaves(err) {
		out = append(out, fmt.Errorf("%s.%w", strings.TrimSuffix(prefix, "."), e))
	}
	return out
}
