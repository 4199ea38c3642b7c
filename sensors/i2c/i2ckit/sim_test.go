package i2ckit_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
)

func TestCheckSim(t *testing.T) {
	good := i2csim.Curve{Base: 20}
	if errs := i2ckit.CheckSim(map[string]i2csim.Curve{"temperature": good}, nil); len(errs) != 0 {
		t.Fatalf("a good sim refused: %v", errs)
	}
	bad := i2csim.Curve{Amplitude: 1} // a wave needs a period
	errs := i2ckit.CheckSim(map[string]i2csim.Curve{"humidity": bad, "co2": bad, "temperature": good},
		[]i2csim.FaultWindow{{Mode: "melt", For: time.Second}})
	if len(errs) != 3 {
		t.Fatalf("%d errors, want 3: %v", len(errs), errs)
	}
	for i, want := range []string{"options.sim.co2: ", "options.sim.humidity: ", "options.sim.faults[0].mode: unknown fault"} {
		if !strings.HasPrefix(errs[i].Error(), want) {
			t.Errorf("error %d = %q, want prefix %q", i, errs[i], want)
		}
	}
	if err := errors.Join(errs...); strings.Contains(err.Error(), "melt") {
		t.Errorf("the error quotes the value: %v", err)
	}
}
