package i2ckit

import (
	"fmt"
	"regexp"
)

var nameRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// CheckName checks the name a kind gives one of its readings (a channel,
// a register), at path in the options ("options.channels[0]"): it must
// match [a-z][a-z0-9_]*, as it names a source, and be used once; seen
// holds the names before it.
func CheckName(seen map[string]bool, path, name string) []error {
	var errs []error
	if !nameRe.MatchString(name) {
		errs = append(errs, fmt.Errorf("%s.name: must match [a-z][a-z0-9_]*", path))
	}
	if seen[name] {
		errs = append(errs, fmt.Errorf("%s.name: used twice", path))
	}
	seen[name] = true
	return errs
}
