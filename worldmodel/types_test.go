package worldmodel

import "testing"

func TestPriorityNames(t *testing.T) {
	for p, name := range map[Priority]string{Low: "low", Normal: "normal", High: "high", Critical: "critical"} {
		if p.String() != name {
			t.Errorf("%d.String() = %q, want %q", p, p.String(), name)
		}
		if got, err := ParsePriority(name); got != p || err != nil {
			t.Errorf("ParsePriority(%q) = %v, %v", name, got, err)
		}
	}
	if s := Priority(9).String(); s != "priority(9)" {
		t.Errorf("an unknown priority prints %q", s)
	}
	if s := Priority(-1).String(); s != "priority(-1)" {
		t.Errorf("a negative priority prints %q", s)
	}
	for _, s := range []string{"", "urgent", "High"} {
		if _, err := ParsePriority(s); err == nil {
			t.Errorf("ParsePriority(%q) accepted", s)
		}
	}
}

func TestKindNames(t *testing.T) {
	for k, name := range map[Kind]string{Reading: "reading", Text: "text", BlobRef: "blob", EventRef: "event", 0: "kind(0)", 9: "kind(9)"} {
		if k.String() != name {
			t.Errorf("%d.String() = %q, want %q", k, k.String(), name)
		}
	}
}
