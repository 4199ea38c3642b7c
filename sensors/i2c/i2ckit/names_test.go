package i2ckit_test

import (
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
)

func TestCheckName(t *testing.T) {
	seen := map[string]bool{}
	if errs := i2ckit.CheckName(seen, "options.channels[0]", "vbat"); len(errs) != 0 {
		t.Fatalf("a good name: %v", errs)
	}
	errs := i2ckit.CheckName(seen, "options.channels[1]", "vbat")
	if len(errs) != 1 || errs[0].Error() != "options.channels[1].name: used twice" {
		t.Fatalf("a name used twice: %v", errs)
	}
	errs = i2ckit.CheckName(seen, "options.channels[2]", "V Bat")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "must match") {
		t.Fatalf("a bad name: %v", errs)
	}
}
