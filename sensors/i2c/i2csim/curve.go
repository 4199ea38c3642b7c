package i2csim

import (
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/sensors/simcurve"
)

// Curve and Point are simcurve's, under the names the I2C simulator's
// configs have always used.
type (
	Curve = simcurve.Curve
	Point = simcurve.Point
)

// Const is a curve that never changes.
func Const(v float64) Curve { return simcurve.Const(v) }

func newRNG(seed uint64) *rand.Rand { return simcurve.NewRNG(seed) }
