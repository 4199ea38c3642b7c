package suggest

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"farm-a", "farm-b2", "sprayers", "headlight.set"}
	for _, tc := range []struct {
		name, want string
		ok         bool
	}{
		{"farm-c", "farm-a", true},    // one substitution
		{"sprayer", "sprayers", true}, // one deletion
		{"headlihgt.set", "headlight.set", true},
		{"tractor", "", false}, // nothing near
		{"", "", false},
	} {
		got, ok := Closest(tc.name, known)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Closest(%q) = %q %v, want %q %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if d := distance("kitten", "sitting"); d != 3 {
		t.Errorf("distance %d, want 3", d)
	}
}
