package motion_test

import (
	"context"
	"sync"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera/motion/motiontest"
)

// The footage the detector is measured on: the two shared clips and clips
// made from them (motiontest). Tuning used vtest, static_lighting,
// switch and objects_a; switch_walk, swing and objects_b are held out.
var footageNames = []string{"vtest", "static_lighting", "switch", "switch_walk", "swing", "objects_a", "objects_b"}

var (
	footageMu    sync.Mutex
	footageCache = map[string]*motiontest.Clip{}
)

// footage returns a clip by name, decoded or made once per test binary.
func footage(tb testing.TB, name string) *motiontest.Clip {
	tb.Helper()
	footageMu.Lock()
	defer footageMu.Unlock()
	return footageLocked(tb, name)
}

func footageLocked(tb testing.TB, name string) *motiontest.Clip {
	tb.Helper()
	if c, ok := footageCache[name]; ok {
		return c
	}
	var c *motiontest.Clip
	switch name {
	case "vtest", "static_lighting":
		var err error
		if c, err = motiontest.Load(context.Background(), clip(tb, name+".mjpeg")); err != nil {
			tb.Fatal(err)
		}
	case "switch":
		c = motiontest.LightSwitch(footageLocked(tb, "vtest"), 300, true, 1)
	case "switch_walk":
		c = motiontest.LightSwitch(footageLocked(tb, "vtest"), 300, false, 2)
	case "swing":
		c = motiontest.Swing(footageLocked(tb, "vtest"), 0.25, 80, 4, 3)
	case "objects_a":
		c = motiontest.Objects(footageLocked(tb, "static_lighting"), 200, 4)
	case "objects_b":
		still := &motiontest.Clip{W: 480, H: 360, Frames: footageLocked(tb, "vtest").Frames[:1]}
		c = motiontest.LightSwitch(motiontest.Objects(still, 300, 5), 300, false, 6)
	default:
		tb.Fatalf("no clip %q", name)
	}
	footageCache[name] = c
	return c
}
