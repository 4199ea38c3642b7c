package board

import "reflect"

// Retired is implemented by a struct a board file decodes into (a kind's
// options, say) whose earlier releases had keys that are gone. A board
// that still names one fails with the reason, at the key, whatever its
// value: "unknown key" would suggest a typo, and ignoring it would let the
// board believe it still has what the key gave. A reason names what
// replaced the key, never a value from the file.
type Retired interface {
	RetiredKeys() map[string]string
}

// retiredKeys are v's retired keys with their reasons (nil: none).
func retiredKeys(v reflect.Value) map[string]string {
	if !v.CanAddr() || !v.Addr().CanInterface() {
		return nil
	}
	if r, ok := v.Addr().Interface().(Retired); ok {
		return r.RetiredKeys()
	}
	return nil
}
