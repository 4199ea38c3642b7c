// Package motion detects motion in a camera's luma plane, in pure Go.
//
// The pipeline follows Frigate's improved motion detector, so that
// thresholds tuned there carry over:
//
//	downscale to FrameHeight rows (area average)
//	→ optional contrast stretch (4th..96th percentile, averaged over 50 frames)
//	→ masks
//	→ lighting compensation (see below)
//	→ difference against a running-average background, 5×5 Gaussian blur (σ≈1)
//	→ |difference| > Threshold
//	→ 3×3 dilation → 8-connected regions of at least MinArea pixels
//	→ recalibration when most of the frame changes at once
//
// Frigate blurs the frame and then differences; differencing and then
// blurring the difference is the same (both are linear) except where the
// lighting model clips, see below.
//
// Lighting: a plain running average cannot follow brightness that changes
// faster than its time constant (clouds, auto-exposure, a light dimmer), and
// every pixel then differs from the background at once. Before differencing,
// each frame's global gain and offset are fitted to the background by least
// squares (a second pass ignores pixels that still differ, i.e. the moving
// things), and the frame is compared with the background mapped into the
// frame's lighting. A global change of the scene's brightness or contrast
// thus cancels out; a person walking does not, because a person is not an
// affine function of the background. A sudden jump of the fit (a light
// switched on) resets the background instead of reporting motion.
//
// Clipping is the one thing the affine model gets wrong: when the light
// dims, the dark parts of the scene sink to black and stay there, brighter
// than the mapped background says (and highlights stay white when it
// brightens). So the mapped background is clipped at the frame's own black
// and white levels, before blurring: blurring first would spread the
// error of every clipped pixel into its unclipped neighbours.
//
// A Detector is not safe for concurrent use. After the first frame of a
// given size it allocates nothing.
package motion

import (
	"errors"
	"fmt"
	"image"
	"math"
)

// Config tunes a detector. Field names in the board config are the yaml tags.
// Start from DefaultConfig: a zero Config is not valid.
type Config struct {
	// FrameHeight is the height, in pixels, the frame is downscaled to
	// before anything else; the width keeps the aspect ratio. Smaller is
	// faster and ignores smaller things.
	FrameHeight int `yaml:"frame_height"`
	// Threshold is the luma difference (0..255, after contrast
	// normalisation) above which a pixel counts as changed.
	Threshold int `yaml:"threshold"`
	// MinArea is the smallest changed region, in pixels at the downscaled
	// size (after dilation), that counts as motion.
	MinArea int `yaml:"min_area"`
	// ImproveContrast stretches the frame's 4th..96th luma percentiles over
	// 0..255 so that the threshold means the same in a dim scene.
	ImproveContrast bool `yaml:"improve_contrast"`
	// CompensateLighting fits each frame's gain and offset to the
	// background before differencing.
	CompensateLighting bool `yaml:"compensate_lighting"`
	// Alpha is the weight of a new frame in the running-average background.
	Alpha float64 `yaml:"alpha"`
	// CalibrationAlpha replaces Alpha while (re)calibrating, so that the
	// background forgets what was in view when it was reset.
	CalibrationAlpha float64 `yaml:"calibration_alpha"`
	// CalibrationFrames is the least number of frames spent calibrating
	// after start and after each reset. No motion is reported meanwhile.
	CalibrationFrames int `yaml:"calibration_frames"`
	// LightningThreshold is the fraction of the frame (0..1) that, when
	// changed at once, resets the background instead of reporting motion.
	LightningThreshold float64 `yaml:"lightning_threshold"`
	// LightingJump is the change of the fitted lighting between two frames,
	// in luma levels at the frame's mean, that resets the background.
	// Slow drifts (clouds, dimmers) stay well below it; a light switch or
	// an exposure step does not.
	LightingJump float64 `yaml:"lighting_jump"`
	// Masks are polygons whose inside is ignored, as "x1,y1,x2,y2,...":
	// pixel coordinates of the full frame, or fractions of its width and
	// height when every value is between 0 and 1 (as in Frigate ≥ 0.14).
	Masks []string `yaml:"masks"`
}

// DefaultConfig returns Frigate's defaults plus lighting compensation.
func DefaultConfig() Config {
	return Config{
		FrameHeight:        100,
		Threshold:          30,
		MinArea:            10,
		ImproveContrast:    true,
		CompensateLighting: true,
		Alpha:              0.01,
		CalibrationAlpha:   0.2,
		CalibrationFrames:  10,
		LightningThreshold: 0.8,
		LightingJump:       25,
	}
}

// Validate reports the first invalid field.
func (c Config) Validate() error {
	var errs []error
	if c.FrameHeight < 16 || c.FrameHeight > 1080 {
		errs = append(errs, fmt.Errorf("frame_height %d: want 16..1080", c.FrameHeight))
	}
	if c.Threshold < 1 || c.Threshold > 255 {
		errs = append(errs, fmt.Errorf("threshold %d: want 1..255", c.Threshold))
	}
	if c.MinArea < 1 {
		errs = append(errs, fmt.Errorf("min_area %d: want ≥ 1", c.MinArea))
	}
	if !(c.Alpha > 0 && c.Alpha <= 1) {
		errs = append(errs, fmt.Errorf("alpha %g: want 0 < alpha ≤ 1", c.Alpha))
	}
	if !(c.CalibrationAlpha > 0 && c.CalibrationAlpha <= 1) {
		errs = append(errs, fmt.Errorf("calibration_alpha %g: want 0 < calibration_alpha ≤ 1", c.CalibrationAlpha))
	}
	if c.CalibrationFrames < 1 {
		errs = append(errs, fmt.Errorf("calibration_frames %d: want ≥ 1", c.CalibrationFrames))
	}
	if !(c.LightningThreshold > 0 && c.LightningThreshold <= 1) {
		errs = append(errs, fmt.Errorf("lightning_threshold %g: want 0 < x ≤ 1", c.LightningThreshold))
	}
	if !(c.LightingJump > 0) {
		errs = append(errs, fmt.Errorf("lighting_jump %g: want > 0", c.LightingJump))
	}
	for i, m := range c.Masks {
		if _, err := parsePolygon(m); err != nil {
			errs = append(errs, fmt.Errorf("masks[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Result is what one frame showed. Boxes is reused by the next Detect call.
type Result struct {
	Motion       bool              // at least one box, and not calibrating
	Boxes        []image.Rectangle // moving regions, in the input frame's pixel coordinates
	Area         float64           // changed area of the boxes' regions, percent of the unmasked frame
	Calibrating  bool              // the background is being (re)built; no motion is reported
	Recalibrated bool              // this frame reset the background (start, lightning, lighting jump)
	Gain, Offset float64           // fitted lighting: background ≈ Gain·frame + Offset
}

// Detector finds motion in a stream of frames of one camera.
type Detector struct {
	cfg Config

	// geometry of the current input size; rebuilt when it changes
	w, h   int // input
	sw, sh int // downscaled
	sc     scaler
	mask   []bool // true: ignored
	masked bool   // any pixel is
	active int    // unmasked downscaled pixels

	cur   []float32 // this frame, downscaled and stretched
	tmp   []float32 // the difference, blurred along rows
	row   []float32
	bg    []float32 // running-average background
	bin   []uint8   // changed pixels, then dilated
	bin2  []uint8
	lab   labeller
	hist  [256]int32
	boxes []image.Rectangle

	fitLo, fitHi float32
	sumsFn       func(bool, float32, float32) moments
	boxFn        func(x0, y0, x1, y1 int)

	control
}

// control is a detector's state over time and the decisions taken on it,
// shared by the pure-Go and the OpenCV pipelines so that they differ only
// in how they compute.
type control struct {
	cfg         Config
	contrast    [50][2]float32 // ring of (low, high) percentiles
	contrastN   int
	contrastI   int
	frames      int
	calibrating bool
	calFrames   int
	motionRun   int // consecutive frames with motion
	prevGain    float64
	prevOffset  float64
}

// first counts a frame and reports whether it is the first since the start
// or a Reset: the caller then takes it as the background.
func (c *control) first() bool {
	c.frames++
	if c.frames == 1 {
		c.reset()
		return true
	}
	return false
}

// reset starts a calibration.
func (c *control) reset() {
	c.calibrating = true
	c.calFrames = 0
	c.motionRun = 0
	c.prevGain, c.prevOffset = 1, 0
	// The contrast stretch averages 50 frames; after a lighting change it
	// would drift towards the new percentiles for 5 s, and every step of
	// that drift would look like a global change.
	c.contrastN, c.contrastI = 0, 0
}

// jump reports whether the lighting fit moved too far since the last frame
// (measured at the frame's mean): a light switched on.
func (c *control) jump(gain, offset, mean float64) bool {
	j := !c.calibrating && math.Abs((gain-c.prevGain)*mean+(offset-c.prevOffset)) > c.cfg.LightingJump
	c.prevGain, c.prevOffset = gain, offset
	return j
}

// settle takes the frame's outcome: changed pixels (before dilation) of
// active ones, and the number of boxes. It reports whether the background
// must be reset to this frame, else how to blend the frame into it.
func (c *control) settle(jump bool, changed, active, boxes int) (reset bool, alpha float32, update bool) {
	if jump || float64(changed) > c.cfg.LightningThreshold*float64(active) {
		c.reset()
		return true, 0, false
	}
	if c.calibrating {
		c.calFrames++
		// Like Frigate: calibrated once little of the frame still differs,
		// but not before CalibrationFrames, so that whatever was in view
		// at the reset has faded from the background.
		if c.calFrames >= c.cfg.CalibrationFrames && float64(changed) < 0.05*float64(active) {
			c.calibrating = false
		}
	}
	switch {
	case c.calibrating:
		c.motionRun = 0
		return false, float32(c.cfg.CalibrationAlpha), true
	case boxes > 0:
		// Like Frigate: something passing by is not blended into the
		// background unless it stays for a while.
		c.motionRun++
		return false, float32(c.cfg.Alpha), c.motionRun >= 10
	}
	c.motionRun = 0
	return false, float32(c.cfg.Alpha), true
}

// New returns a detector for cfg.
func New(cfg Config) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Detector{cfg: cfg, control: control{cfg: cfg}}
	// bound once: a method value allocates
	d.sumsFn, d.boxFn = d.sums, d.appendBox
	return d, nil
}

// Config returns the detector's configuration.
func (d *Detector) Config() Config { return d.cfg }

// Size returns the downscaled size the detector works at (0×0 before the
// first frame).
func (d *Detector) Size() (w, h int) { return d.sw, d.sh }

// Reset forgets the background; the next frame starts a calibration.
func (d *Detector) Reset() { d.frames = 0 }

func (d *Detector) setup(w, h int) error {
	sh := d.cfg.FrameHeight
	if sh > h {
		sh = h
	}
	sw := int(math.Round(float64(w) * float64(sh) / float64(h)))
	if sw < 1 {
		sw = 1
	}
	if sw > w {
		sw = w
	}
	if err := d.sc.init(w, h, sw, sh); err != nil {
		return err
	}
	n := sw * sh
	d.w, d.h, d.sw, d.sh = w, h, sw, sh
	d.cur = make([]float32, n)
	d.row = make([]float32, sw)
	d.tmp = make([]float32, n)
	d.bg = make([]float32, n)
	d.bin = make([]uint8, n)
	d.bin2 = make([]uint8, n)
	d.lab.init(sw, sh)
	d.boxes = make([]image.Rectangle, 0, 16)
	d.mask = make([]bool, n)
	for _, m := range d.cfg.Masks {
		poly, err := parsePolygon(m)
		if err != nil {
			return err
		}
		rasterize(poly, w, h, sw, sh, d.mask)
	}
	d.active = 0
	for _, m := range d.mask {
		if !m {
			d.active++
		}
	}
	d.masked = d.active < n
	d.frames = 0
	return nil
}

// Detect processes one frame given as its luma plane (w×h pixels, stride
// bytes per row). It panics if y is shorter than the frame.
func (d *Detector) Detect(y []byte, stride, w, h int) Result {
	if w <= 0 || h <= 0 || stride < w || len(y) < (h-1)*stride+w {
		panic(fmt.Sprintf("motion: frame %dx%d stride %d does not fit %d bytes", w, h, stride, len(y)))
	}
	if w != d.w || h != d.h {
		if err := d.setup(w, h); err != nil {
			panic(err) // cannot happen: masks were validated by New
		}
	}
	d.sc.run(y, stride, d.cur, &d.hist)
	// the frame's black and white: where the camera clipped, if it did
	black, white := float32(firstBin(&d.hist)), float32(lastBin(&d.hist))
	if d.cfg.ImproveContrast {
		k, lo := d.stretch(&d.hist, int32(len(d.cur)))
		for i, v := range d.cur {
			d.cur[i] = (v - lo) * k
		}
		black, white = (black-lo)*k, (white-lo)*k
	}
	if d.masked {
		for i, m := range d.mask {
			if m {
				d.cur[i] = 0 // as in Frigate
			}
		}
	}

	if d.first() {
		copy(d.bg, d.cur)
		return Result{Calibrating: true, Recalibrated: true, Gain: 1}
	}

	gain, offset, mean := 1.0, 0.0, 0.0
	if d.cfg.CompensateLighting {
		d.fitLo, d.fitHi = black+fitMargin, white-fitMargin
		gain, offset, mean = fitLighting(d.sumsFn)
	}
	jump := d.jump(gain, offset, mean)

	changed := d.changes(float32(gain), float32(offset), black, white)
	dilate3(d.bin, d.bin2, d.sw, d.sh)
	d.boxes = d.boxes[:0]
	counted := d.lab.label(d.bin, d.sw, d.sh, d.cfg.MinArea, d.boxFn)

	res := Result{Gain: gain, Offset: offset}
	reset, alpha, update := d.settle(jump, changed, d.active, len(d.boxes))
	if reset {
		copy(d.bg, d.cur)
		d.boxes = d.boxes[:0]
		res.Calibrating, res.Recalibrated = true, true
		res.Boxes = d.boxes
		return res
	}
	if update {
		// The frame goes in as it is, not mapped to the background's
		// lighting: the background follows lasting changes of the light
		// (dusk) slowly, which keeps the fitted map near identity and
		// the clipped regions few.
		bg := d.bg[:len(d.cur)]
		for i, v := range d.cur {
			bg[i] += alpha * (v - bg[i])
		}
	}

	res.Calibrating = d.calibrating
	if d.calibrating {
		res.Boxes = d.boxes[:0]
		return res
	}
	res.Boxes = d.boxes
	res.Motion = len(d.boxes) > 0
	if d.active > 0 {
		res.Area = 100 * float64(counted) / float64(d.active)
	}
	return res
}

func firstBin(h *[256]int32) int {
	for v, c := range h {
		if c != 0 {
			return v
		}
	}
	return 0
}

func lastBin(h *[256]int32) int {
	for v := 255; v > 0; v-- {
		if h[v] != 0 {
			return v
		}
	}
	return 0
}

// stretch returns the map v → (v−lo)·k that takes the 4th..96th
// percentiles of hist (n values), averaged over the last 50 frames, to
// 0..255. Values are float and are not clipped: clipping would break the
// affine lighting model for the brightest and darkest pixels.
func (c *control) stretch(hist *[256]int32, n int32) (k, lo float32) {
	l, h := percentile(hist, n*4/100), percentile(hist, n*96/100)
	if h > l { // a uniform frame has no contrast to measure
		c.contrast[c.contrastI] = [2]float32{l, h}
		c.contrastI = (c.contrastI + 1) % len(c.contrast)
		if c.contrastN < len(c.contrast) {
			c.contrastN++
		}
	}
	if c.contrastN == 0 {
		return 1, 0
	}
	var sl, sh float32
	for _, v := range c.contrast[:c.contrastN] {
		sl += v[0]
		sh += v[1]
	}
	sl /= float32(c.contrastN)
	sh /= float32(c.contrastN)
	// At most 4× gain: a dark, flat scene stretched further would lift its
	// sensor noise above the threshold.
	return 255 / max(sh-sl, 64), sl
}

func percentile(h *[256]int32, rank int32) float32 {
	var acc int32
	for v, c := range h {
		acc += c
		if acc > rank {
			return float32(v)
		}
	}
	return 255
}

// moments are the sums of a least-squares fit of y ≈ gain·x + offset.
type moments struct{ n, sx, sy, sxx, sxy float64 }

func (m moments) solve() (gain, offset, mean float64) {
	if m.n == 0 {
		return 1, 0, 0
	}
	mx, my := m.sx/m.n, m.sy/m.n
	vx := m.sxx/m.n - mx*mx
	cxy := m.sxy/m.n - mx*my
	if vx < 1 {
		// A flat frame has no contrast to fit a gain to: offset only.
		return 1, my - mx, mx
	}
	gain = math.Min(math.Max(cxy/vx, 0.25), 4)
	return gain, my - gain*mx, mx
}

// fitLighting fits bg ≈ gain·cur + offset with the moments that sums
// gathers over the unmasked, unclipped pixels; the second pass (robust)
// drops the pixels the first fit leaves above the threshold, which are
// where things move. It returns the frame's mean too, for measuring how
// far the fit moved.
func fitLighting(sums func(robust bool, gain, offset float32) moments) (gain, offset, mean float64) {
	all := sums(false, 0, 0)
	gain, offset, mean = all.solve()
	if all.n < 16 {
		return 1, 0, mean
	}
	in := sums(true, float32(gain), float32(offset))
	if in.n < all.n/4 || in.n < 16 {
		// Most of the frame changed: the fit would describe the moving
		// things, not the lighting. Leave it to the lightning rule.
		_, _, mean = in.solve()
		return 1, 0, mean
	}
	return in.solve()
}

// fitMargin keeps pixels within this many levels of the frame's black or
// white out of the fit: they may be clipped, and clipped pixels do not
// follow the lighting.
const fitMargin = 8

// sums gathers the fit's moments. Two parameters need far fewer samples
// than a frame has pixels: every other pixel of every other row is plenty.
func (d *Detector) sums(robust bool, g, o float32) moments {
	thr := float32(d.cfg.Threshold)
	sw := d.sw
	var m moments
	// float32 partial sums per row keep the inner loop cheap; a row has
	// at most a few hundred samples, few enough for float32.
	for r := 0; r < d.sh; r += 2 {
		cur := d.cur[r*sw : (r+1)*sw]
		bg := d.bg[r*sw : (r+1)*sw]
		mask := d.mask[r*sw : (r+1)*sw]
		var rn, rx, ry, rxx, rxy float32
		for i := 0; i < len(cur); i += 2 {
			if d.masked && mask[i] {
				continue
			}
			x, y := cur[i], bg[i]
			if x <= d.fitLo || x >= d.fitHi {
				continue
			}
			if robust {
				if e := g*x + o - y; e > thr || e < -thr {
					continue
				}
			}
			rn++
			rx += x
			ry += y
			rxx += x * x
			rxy += x * y
		}
		m.n += float64(rn)
		m.sx += float64(rx)
		m.sy += float64(ry)
		m.sxx += float64(rxx)
		m.sxy += float64(rxy)
	}
	return m
}

// changes marks in bin the unmasked pixels where the frame differs from
// the background mapped into the frame's lighting, (bg − offset)/gain,
// clipped at the frame's black and white, by more than the threshold once
// the difference is blurred; it returns how many (before dilation, which
// would inflate noise specks ninefold).
func (d *Detector) changes(gain, offset, black, white float32) int {
	n := diffBlurThreshold(d.cur, d.bg, d.tmp, d.row, d.bin, d.sw, d.sh,
		offset, 1/gain, black, white, float32(d.cfg.Threshold))
	if d.masked {
		for i, m := range d.mask[:len(d.bin)] {
			if m && d.bin[i] != 0 {
				d.bin[i] = 0
				n--
			}
		}
	}
	return n
}
