//go:build gocv

package motion

import (
	"fmt"
	"image"
	"image/color"

	"gocv.io/x/gocv"
)

// OpenCV is the detector's algorithm computed with OpenCV (gocv), for
// comparing with the pure-Go Detector frame by frame on the same footage,
// and for boards where OpenCV is there anyway. The temporal logic (contrast
// ring, calibration, lighting jumps, background updates) is the very same
// code; the per-pixel work is OpenCV's: INTER_AREA resize, 5×5 Gaussian
// blur (OpenCV's fixed 5-tap kernel at σ=0 is the binomial one the Go blur
// uses), threshold, 3×3 dilation, connected components with statistics.
//
// An OpenCV detector holds C memory: Close it.
type OpenCV struct {
	cfg Config
	control

	w, h, sw, sh int
	sc           scaler // for the box mapping, identical to Detector's
	active       int
	masked       bool
	hist         [256]int32
	boxes        []image.Rectangle

	packed []byte // the input without row padding, when it has some
	small  gocv.Mat
	cur    gocv.Mat // 32F, stretched
	bg     gocv.Mat
	pred   gocv.Mat
	diff   gocv.Mat
	absd   gocv.Mat
	bin    gocv.Mat // 8U, 0/255
	dil    gocv.Mat
	mask   gocv.Mat // 8U, 255 where masked
	tmp    gocv.Mat
	tmp2   gocv.Mat
	zero32 gocv.Mat
	zero8  gocv.Mat
	lo32   gocv.Mat
	kernel gocv.Mat
	labels gocv.Mat
	stats  gocv.Mat
	cents  gocv.Mat
	tileO  gocv.Mat // the lighting map per tile, then resized to the frame
	tileIG gocv.Mat
	mapO   gocv.Mat
	mapIG  gocv.Mat
	prev   gocv.Mat // the previous frame's dilated changes
	maskB  []uint8  // 1 where masked, for the shared lighting code
	lt     lighting
	rs     rebaseScratch
	mats   []*gocv.Mat
}

// NewOpenCV returns an OpenCV detector for cfg.
func NewOpenCV(cfg Config) (*OpenCV, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &OpenCV{cfg: cfg, control: control{cfg: cfg}}
	d.mats = []*gocv.Mat{&d.small, &d.cur, &d.bg, &d.pred, &d.diff, &d.absd, &d.bin, &d.dil, &d.mask,
		&d.tmp, &d.tmp2, &d.zero32, &d.zero8, &d.lo32, &d.kernel, &d.labels, &d.stats, &d.cents,
		&d.tileO, &d.tileIG, &d.mapO, &d.mapIG, &d.prev}
	for _, m := range d.mats {
		*m = gocv.NewMat()
	}
	return d, nil
}

// Close frees the OpenCV buffers.
func (d *OpenCV) Close() error {
	for _, m := range d.mats {
		m.Close()
	}
	return nil
}

func (d *OpenCV) setup(w, h int) error {
	sh := min(d.cfg.FrameHeight, h)
	sw := min(max(int(float64(w)*float64(sh)/float64(h)+0.5), 1), w)
	if err := d.sc.init(w, h, sw, sh); err != nil {
		return err
	}
	d.w, d.h, d.sw, d.sh = w, h, sw, sh
	raster := make([]uint8, sw*sh)
	for _, m := range d.cfg.Masks {
		poly, err := parsePolygon(m)
		if err != nil {
			return err
		}
		rasterize(poly, w, h, sw, sh, raster)
	}
	mb := make([]byte, sw*sh)
	d.active = 0
	for i, m := range raster {
		if m != 0 {
			mb[i] = 255
		} else {
			d.active++
		}
	}
	d.masked = d.active < sw*sh
	d.mask.Close()
	mask, err := gocv.NewMatFromBytes(sh, sw, gocv.MatTypeCV8U, mb)
	if err != nil {
		return err
	}
	d.mask = mask.Clone() // own the memory
	mask.Close()
	d.replace(&d.zero32, gocv.NewMatWithSize(sh, sw, gocv.MatTypeCV32F))
	d.zero32.SetTo(gocv.NewScalar(0, 0, 0, 0))
	d.replace(&d.zero8, gocv.NewMatWithSize(sh, sw, gocv.MatTypeCV8U))
	d.zero8.SetTo(gocv.NewScalar(0, 0, 0, 0))
	d.replace(&d.lo32, gocv.NewMatWithSize(sh, sw, gocv.MatTypeCV32F))
	d.replace(&d.kernel, gocv.GetStructuringElement(gocv.MorphRect, image.Pt(3, 3)))
	d.replace(&d.prev, gocv.NewMatWithSize(sh, sw, gocv.MatTypeCV8U))
	d.prev.SetTo(gocv.NewScalar(0, 0, 0, 0))
	d.maskB = raster
	d.lt.init(sw, sh, raster)
	d.rs.init(sw, sh)
	d.replace(&d.tileO, gocv.NewMatWithSize(d.lt.ty, d.lt.tx, gocv.MatTypeCV32F))
	d.replace(&d.tileIG, gocv.NewMatWithSize(d.lt.ty, d.lt.tx, gocv.MatTypeCV32F))
	d.frames = 0
	return nil
}

func (d *OpenCV) replace(m *gocv.Mat, n gocv.Mat) {
	m.Close()
	*m = n
}

// Detect is Detector.Detect computed with OpenCV.
func (d *OpenCV) Detect(y []byte, stride, w, h int) Result {
	d.shrink(y, stride, w, h)
	black, white := d.normalise()
	if d.first() {
		d.cur.CopyTo(&d.bg)
		return Result{Calibrating: true, Recalibrated: true, Gain: 1}
	}
	cur, _ := d.cur.DataPtrFloat32()
	bg, _ := d.bg.DataPtrFloat32()
	prev, _ := d.prev.DataPtrUint8()
	gain, offset, mean := 1.0, 0.0, 0.0
	if d.cfg.CompensateLighting {
		gain, offset, mean = d.lt.fit(cur, bg, prev, d.maskB, black+fitMargin, white-fitMargin, float32(d.cfg.Threshold))
	} else {
		d.lt.identity()
	}
	jump := d.jump(gain, offset, mean)
	changed := d.changes(black, white)
	counted := d.components()

	res := Result{Gain: gain, Offset: offset}
	act, alpha, update := d.settle(jump, changed, d.active, len(d.boxes))
	switch act {
	case reset:
		d.cur.CopyTo(&d.bg)
	case rebase:
		// prev is 0/255, which the shared code takes as set
		d.lt.rebase(cur, bg, prev, &d.rs, black, white)
	}
	if act == keep && update {
		d.learn(alpha)
	}
	// this frame's changes are the next one's moving things
	d.dil.CopyTo(&d.prev)
	d.finish(&res, act, d.boxes, counted, d.active)
	return res
}

// shrink resizes the frame (INTER_AREA) into small, packing its rows first
// when the stride pads them; a new frame size sets the detector up again.
func (d *OpenCV) shrink(y []byte, stride, w, h int) {
	if w <= 0 || h <= 0 || stride < w || len(y) < (h-1)*stride+w {
		panic(fmt.Sprintf("motion: frame %dx%d stride %d does not fit %d bytes", w, h, stride, len(y)))
	}
	if w != d.w || h != d.h {
		if err := d.setup(w, h); err != nil {
			panic(err)
		}
	}
	data := y[:h*stride-stride+w]
	if stride != w {
		if cap(d.packed) < w*h {
			d.packed = make([]byte, w*h)
		}
		d.packed = d.packed[:w*h]
		for r := 0; r < h; r++ {
			copy(d.packed[r*w:(r+1)*w], y[r*stride:])
		}
		data = d.packed
	}
	src, err := gocv.NewMatFromBytes(h, w, gocv.MatTypeCV8U, data[:w*h])
	if err != nil {
		panic(err)
	}
	gocv.Resize(src, &d.small, image.Pt(d.sw, d.sh), 0, 0, gocv.InterpolationArea)
	src.Close()
}

// normalise turns small into cur, float, contrast-stretched when the config
// asks, masked areas zero; it returns the frame's black and white levels
// in cur's scale.
func (d *OpenCV) normalise() (black, white float32) {
	small, _ := d.small.DataPtrUint8()
	d.hist = [256]int32{}
	for _, v := range small {
		d.hist[v]++
	}
	black, white = float32(firstBin(&d.hist)), float32(lastBin(&d.hist))
	k, lo := float32(1), float32(0)
	if d.cfg.ImproveContrast {
		k, lo = d.stretch(&d.hist, int32(len(small)))
		black, white = (black-lo)*k, (white-lo)*k
	}
	d.small.ConvertToWithParams(&d.cur, gocv.MatTypeCV32F, k, -lo*k)
	if d.masked {
		d.zero32.CopyToWithMask(&d.cur, d.mask)
	}
	return black, white
}

// changes compares cur with the background in this frame's lighting,
// clipped at its black and white (the tiles' maps resized to the frame
// bilinearly): the blurred difference over the threshold is bin, dilated
// dil. It returns how many pixels changed.
func (d *OpenCV) changes(black, white float32) int {
	d.mapLighting()
	gocv.Subtract(d.bg, d.mapO, &d.pred)
	gocv.Multiply(d.pred, d.mapIG, &d.pred)
	d.lo32.SetTo(gocv.NewScalar(float64(black), 0, 0, 0))
	gocv.Max(d.pred, d.lo32, &d.pred)
	gocv.Threshold(d.pred, &d.pred, white, 0, gocv.ThresholdTrunc)
	gocv.Subtract(d.cur, d.pred, &d.diff)
	gocv.GaussianBlur(d.diff, &d.tmp, image.Pt(5, 5), 0, 0, gocv.BorderReplicate)
	gocv.AbsDiff(d.tmp, d.zero32, &d.absd)
	gocv.Threshold(d.absd, &d.tmp, float32(d.cfg.Threshold), 255, gocv.ThresholdBinary)
	d.tmp.ConvertTo(&d.bin, gocv.MatTypeCV8U)
	if d.masked {
		d.zero8.CopyToWithMask(&d.bin, d.mask)
	}
	changed := gocv.CountNonZero(d.bin)
	gocv.DilateWithParams(d.bin, &d.dil, d.kernel, image.Pt(-1, -1), 1, gocv.BorderConstant, color.RGBA{})
	return changed
}

// components finds the connected regions of dil at least MinArea large:
// their boxes, in frame coordinates, into d.boxes. It returns their area.
func (d *OpenCV) components() (counted int) {
	n := gocv.ConnectedComponentsWithStatsWithParams(d.dil, &d.labels, &d.stats, &d.cents, 8, gocv.MatTypeCV32S, gocv.CCL_DEFAULT)
	d.boxes = d.boxes[:0]
	for i := 1; i < n; i++ { // 0 is the background
		area := int(d.stats.GetIntAt(i, int(gocv.CC_STAT_AREA)))
		if area < d.cfg.MinArea {
			continue
		}
		counted += area
		x0, y0 := int(d.stats.GetIntAt(i, int(gocv.CC_STAT_LEFT))), int(d.stats.GetIntAt(i, int(gocv.CC_STAT_TOP)))
		x1 := x0 + int(d.stats.GetIntAt(i, int(gocv.CC_STAT_WIDTH)))
		y1 := y0 + int(d.stats.GetIntAt(i, int(gocv.CC_STAT_HEIGHT)))
		d.boxes = append(d.boxes, image.Rect(d.sc.xs[x0], d.sc.ys[y0], d.sc.xs[x1], d.sc.ys[y1]))
	}
	return counted
}

// learn blends cur into the background at rate alpha; while settling after
// a light step, what moves stays out of it.
func (d *OpenCV) learn(alpha float32) {
	if d.calibrating && d.afterStep {
		gocv.BitwiseNot(d.dil, &d.tmp2)
		gocv.AccumulatedWeightedWithMask(d.cur, &d.bg, float64(alpha), d.tmp2)
		return
	}
	gocv.AddWeighted(d.bg, float64(1-alpha), d.cur, float64(alpha), 0, &d.bg)
}

// mapLighting resizes the tiles' maps to the frame (INTER_LINEAR, the
// interpolation the Go pipeline computes row by row).
func (d *OpenCV) mapLighting() {
	o, _ := d.tileO.DataPtrFloat32()
	ig, _ := d.tileIG.DataPtrFloat32()
	copy(o, d.lt.o)
	copy(ig, d.lt.ig)
	gocv.Resize(d.tileO, &d.mapO, image.Pt(d.sw, d.sh), 0, 0, gocv.InterpolationLinear)
	gocv.Resize(d.tileIG, &d.mapIG, image.Pt(d.sw, d.sh), 0, 0, gocv.InterpolationLinear)
}
