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
// the frame's gain and offset against the background are fitted per tile
// (see lighting), leaving out the moving things, and the frame is compared
// with the background mapped into the frame's lighting. A change of the
// scene's brightness or contrast, global or local, thus cancels out; a
// person walking does not, because a person is not an affine function of
// the background. A sudden jump of the fit (a light switched on) re-bases
// the background on the frame for a few frames instead of reporting motion
// or recalibrating from scratch.
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
	// background, per tile, before differencing.
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
	// in luma levels at the frame's mean, that re-bases the background on
	// the frame (a light step) and settles for a few frames.
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
		errs = append(errs, errors.New("frame_height: want 16..1080"))
	}
	if c.Threshold < 1 || c.Threshold > 255 {
		errs = append(errs, errors.New("threshold: want 1..255"))
	}
	if c.MinArea < 1 {
		errs = append(errs, errors.New("min_area: want ≥ 1"))
	}
	if !(c.Alpha > 0 && c.Alpha <= 1) {
		errs = append(errs, errors.New("alpha: want 0 < alpha ≤ 1"))
	}
	if !(c.CalibrationAlpha > 0 && c.CalibrationAlpha <= 1) {
		errs = append(errs, errors.New("calibration_alpha: want 0 < calibration_alpha ≤ 1"))
	}
	if c.CalibrationFrames < 1 {
		errs = append(errs, errors.New("calibration_frames: want ≥ 1"))
	}
	if !(c.LightningThreshold > 0 && c.LightningThreshold <= 1) {
		errs = append(errs, errors.New("lightning_threshold: want 0 < x ≤ 1"))
	}
	if !(c.LightingJump > 0) {
		errs = append(errs, errors.New("lighting_jump: want > 0"))
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
	mask   []uint8 // 1: ignored
	masked bool    // any pixel is
	active int     // unmasked downscaled pixels

	cur   []float32 // this frame, downscaled and stretched
	tmp   []float32 // the difference, blurred along rows
	row   []float32
	bg    []float32 // running-average background
	bin   []uint8   // changed pixels, then dilated
	bin2  []uint8
	prev  []uint8 // the previous frame's bin: what was moving
	rs    rebaseScratch
	lab   labeller
	hist  [256]int32
	boxes []image.Rectangle

	lt    lighting
	boxFn func(x0, y0, x1, y1 int)

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
	calMin      int  // frames this calibration lasts at least
	afterStep   bool // settling after a light step, not calibrating from scratch
	motionRun   int  // consecutive frames with motion
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
	c.calMin = c.cfg.CalibrationFrames
	c.afterStep = false
	c.motionRun = 0
	c.prevGain, c.prevOffset = 1, 0
	// The contrast stretch averages 50 frames; after a lighting change it
	// would drift towards the new percentiles for 5 s, and every step of
	// that drift would look like a global change.
	c.contrastN, c.contrastI = 0, 0
}

// stepFrames is how long the detector settles after a light step, during
// which the background takes in the new light's effects that no affine map
// of the old one models (shadows cast by a lamp, a camera's curve).
const stepFrames = 3

// rebased starts the short settling after a light step, when the caller
// re-based the background on the frame. The contrast ring is kept: its
// drift towards the new light's percentiles is an affine change that the
// lighting fit follows.
func (c *control) rebased() {
	c.calibrating = true
	c.calFrames = 0
	c.calMin = stepFrames
	c.afterStep = true
	c.motionRun = 0
	c.prevGain, c.prevOffset = 1, 0
}

// jump reports whether the lighting fit moved too far since the last frame
// (measured at the frame's mean): a light switched on.
func (c *control) jump(gain, offset, mean float64) bool {
	j := !c.calibrating && math.Abs((gain-c.prevGain)*mean+(offset-c.prevOffset)) > c.cfg.LightingJump
	c.prevGain, c.prevOffset = gain, offset
	return j
}

// action is what a frame does to the background besides blending in.
type action int

const (
	keep   action = iota
	reset         // start over from this frame: calibrate
	rebase        // a light step: re-base on this frame, settle briefly
)

// settle takes the frame's outcome: changed pixels (before dilation) of
// active ones, and the number of boxes. It reports whether the background
// must be reset or re-based, else how to blend the frame into it.
func (c *control) settle(jump bool, changed, active, boxes int) (act action, alpha float32, update bool) {
	if float64(changed) > c.cfg.LightningThreshold*float64(active) {
		c.reset()
		return reset, 0, false
	}
	if jump {
		c.rebased()
		return rebase, 0, false
	}
	if c.calibrating {
		c.calFrames++
		// Like Frigate: calibrated once little of the frame still differs,
		// but not before calMin frames, so that whatever was in view at
		// the reset has faded from the background. After a light step the
		// background was re-based without the moving things, whose changes
		// say nothing about the settling.
		if c.calFrames >= c.calMin && (c.afterStep || float64(changed) < 0.05*float64(active)) {
			c.calibrating = false
		}
	}
	switch {
	case c.calibrating:
		c.motionRun = 0
		return keep, float32(c.cfg.CalibrationAlpha), true
	case boxes > 0:
		// Like Frigate: something passing by is not blended into the
		// background unless it stays for a while.
		c.motionRun++
		return keep, float32(c.cfg.Alpha), c.motionRun >= 10
	}
	c.motionRun = 0
	return keep, float32(c.cfg.Alpha), true
}

// finish fills in what a frame reports after settle decided act: a reset
// or re-base recalibrates, and a calibrating detector reports no motion;
// otherwise the boxes and the share of the active pixels that changed in
// them (counted).
func (c *control) finish(res *Result, act action, boxes []image.Rectangle, counted, active int) {
	switch {
	case act != keep:
		res.Calibrating, res.Recalibrated = true, true
		res.Boxes = boxes[:0]
	case c.calibrating:
		res.Calibrating = true
		res.Boxes = boxes[:0]
	default:
		res.Boxes = boxes
		res.Motion = len(boxes) > 0
		if active > 0 {
			res.Area = 100 * float64(counted) / float64(active)
		}
	}
}

// New returns a detector for cfg.
func New(cfg Config) (*Detector, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Detector{cfg: cfg, control: control{cfg: cfg}}
	d.boxFn = d.appendBox // bound once: a method value allocates
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
	// eight values of slack after the last row: diffSegs works in eights
	d.cur = make([]float32, n, n+8)
	d.row = make([]float32, sw, sw+8)
	d.tmp = make([]float32, n)
	d.bg = make([]float32, n, n+8)
	d.bin = make([]uint8, n)
	d.bin2 = make([]uint8, n)
	d.prev = make([]uint8, n)
	d.rs.init(sw, sh)
	d.lab.init(sw, sh)
	d.boxes = make([]image.Rectangle, 0, 16)
	d.mask = make([]uint8, n)
	for _, m := range d.cfg.Masks {
		poly, err := parsePolygon(m)
		if err != nil {
			return err
		}
		rasterize(poly, w, h, sw, sh, d.mask)
	}
	d.active = 0
	for _, m := range d.mask {
		if m == 0 {
			d.active++
		}
	}
	d.masked = d.active < n
	d.lt.init(sw, sh, d.mask)
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
		black, white = (black-lo)*k, (white-lo)*k
		if d.masked {
			for i, v := range d.cur {
				d.cur[i] = (v - lo) * k * float32(1-d.mask[i]) // masked: 0, as in Frigate
			}
		} else {
			stretch(d.cur, lo, k)
		}
	} else if d.masked {
		for i, m := range d.mask {
			d.cur[i] *= float32(1 - m)
		}
	}

	if d.first() {
		copy(d.bg, d.cur)
		return Result{Calibrating: true, Recalibrated: true, Gain: 1}
	}

	gain, offset, mean := 1.0, 0.0, 0.0
	if d.cfg.CompensateLighting {
		// the previous frame's dilated changes are the moving things,
		// which the fit leaves out
		gain, offset, mean = d.lt.fit(d.cur, d.bg, d.prev, d.mask, black+fitMargin, white-fitMargin, float32(d.cfg.Threshold))
	} else {
		d.lt.identity()
	}
	jump := d.jump(gain, offset, mean)

	changed := diffBlurThreshold(d.cur, d.bg, d.tmp, d.row, d.bin, d.sw, d.sh,
		&d.lt, black, white, float32(d.cfg.Threshold))
	if d.masked {
		for i, m := range d.mask[:len(d.bin)] {
			changed -= int(m & d.bin[i])
			d.bin[i] &^= m
		}
	}
	dilate3(d.bin, d.bin2, d.sw, d.sh)
	d.boxes = d.boxes[:0]
	counted := d.lab.label(d.bin, d.sw, d.sh, d.cfg.MinArea, d.boxFn)

	res := Result{Gain: gain, Offset: offset}
	act, alpha, update := d.settle(jump, changed, d.active, len(d.boxes))
	switch act {
	case reset:
		copy(d.bg, d.cur)
	case rebase:
		d.lt.rebase(d.cur, d.bg, d.prev, &d.rs, black, white)
	}
	// this frame's changes are the next one's moving things
	d.bin, d.prev = d.prev, d.bin
	if act == keep && update {
		// The frame goes in as it is, not mapped to the background's
		// lighting: the background follows lasting changes of the light
		// (dusk) slowly, which keeps the fitted map near identity and
		// the clipped regions few.
		bg := d.bg[:len(d.cur)]
		if d.calibrating && d.afterStep {
			// settling after a light step: what moves stays out
			moving := d.prev[:len(d.cur)]
			for i, v := range d.cur {
				bg[i] += alpha * float32(1-moving[i]) * (v - bg[i])
			}
		} else {
			blend(bg, d.cur, alpha)
		}
	}
	d.finish(&res, act, d.boxes, counted, d.active)
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

// fitMargin keeps pixels within this many levels of the frame's black or
// white out of the fit: they may be clipped, and clipped pixels do not
// follow the lighting.
const fitMargin = 8
