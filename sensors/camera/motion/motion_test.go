package motion

import (
	"image"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// run feeds frames [0, n) of the scene to a detector and returns the results
// (boxes copied, since the detector reuses them).
func run(t testing.TB, cfg Config, sc camsim.Config, n int) ([]Result, *camsim.Scene) {
	t.Helper()
	scene, err := camsim.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, sc.Width*sc.Height)
	out := make([]Result, n)
	for i := range n {
		scene.Render(i, buf)
		r := d.Detect(buf, sc.Width, sc.Width, sc.Height)
		r.Boxes = append([]image.Rectangle(nil), r.Boxes...)
		out[i] = r
	}
	return out, scene
}

func union(rs []image.Rectangle) image.Rectangle {
	var u image.Rectangle
	for _, r := range rs {
		u = u.Union(r)
	}
	return u
}

func TestObjectCrossingIsFollowed(t *testing.T) {
	sc := camsim.Config{
		Width: 320, Height: 240, Seed: 3, Noise: 6,
		Objects: []camsim.Object{{W: 40, H: 60, Y: 100, Speed: 4, Start: 40, Level: 120}},
	}
	res, scene := run(t, DefaultConfig(), sc, 200)
	followed, inView := 0, 0
	for i, r := range res {
		truth := union(scene.Boxes(i, nil))
		if i < 20 {
			continue // calibration
		}
		if truth.Empty() {
			// before it enters and after it left (allow the 3 frames in
			// which the last sliver leaves the blurred, dilated view)
			if r.Motion && (i < 40 || i > 40+(320+40)/4+3) {
				t.Errorf("frame %d: motion %v with nothing in view", i, r.Boxes)
			}
			continue
		}
		if truth.Dx()*truth.Dy() < 20*60 {
			continue // mostly outside the frame
		}
		inView++
		got := union(r.Boxes)
		if !r.Motion {
			t.Errorf("frame %d: no motion with object at %v", i, truth)
			continue
		}
		// The box sits on the object: it overlaps most of it and does not
		// reach far beyond it (blur and dilation add a few pixels; the
		// trailing background uncovered by the object is motion too).
		inter := got.Intersect(truth)
		if inter.Dx()*inter.Dy() < truth.Dx()*truth.Dy()*8/10 {
			t.Errorf("frame %d: box %v covers too little of object %v", i, got, truth)
			continue
		}
		if !got.In(truth.Inset(-24)) {
			t.Errorf("frame %d: box %v reaches far beyond object %v", i, got, truth)
			continue
		}
		if r.Area <= 0 || r.Area > 20 {
			t.Errorf("frame %d: area %.2f%%, want (0, 20]", i, r.Area)
		}
		followed++
	}
	if inView < 50 || followed != inView {
		t.Fatalf("followed the object in %d of %d frames", followed, inView)
	}
}

// A static scene whose brightness swings like static_lighting.mjpeg: ±15 %
// over 8 s at 10 fps, with sensor noise.
var driftScene = camsim.Config{
	Width: 320, Height: 240, Seed: 5, Noise: 6, Drift: 0.15, DriftPeriod: 80,
}

func TestStaticSceneWithLightingDriftHasNoMotion(t *testing.T) {
	res, _ := run(t, DefaultConfig(), driftScene, 400)
	for i, r := range res[20:] {
		if r.Motion || r.Recalibrated {
			t.Errorf("frame %d: motion %v area %.2f recalibrated %v gain %.3f", i+20, r.Motion, r.Area, r.Recalibrated, r.Gain)
		}
	}
}

// Without compensation the same drift is motion, again and again, until
// the lightning rule resets the background: this is what the compensation
// is for, and it shows the scene is a real test of it.
func TestDriftIsMotionWithoutCompensation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.CompensateLighting = false
	res, _ := run(t, cfg, driftScene, 400)
	motion, resets := 0, 0
	for _, r := range res[20:] {
		if r.Motion {
			motion++
		}
		if r.Recalibrated {
			resets++
		}
	}
	if motion < 40 || resets < 4 {
		t.Fatalf("without compensation: motion in %d of 380 frames, %d resets; the drift scene does not exercise the compensation", motion, resets)
	}
}

func TestBrightnessJumpRecalibrates(t *testing.T) {
	for _, comp := range []bool{true, false} {
		name := "compensated"
		if !comp {
			name = "uncompensated" // the lightning rule must catch it alone
		}
		t.Run(name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.CompensateLighting = comp
			sc := camsim.Config{Width: 320, Height: 240, Seed: 9, Noise: 5, JumpAt: 100, JumpGain: 1.5, JumpOffset: 20}
			res, _ := run(t, cfg, sc, 200)
			if !res[100].Recalibrated {
				t.Errorf("frame 100 (jump): not recalibrated: %+v", res[100])
			}
			for i, r := range res[20:] {
				if r.Motion {
					t.Errorf("frame %d: motion area %.2f%% %v", i+20, r.Area, r.Boxes)
				}
			}
			back := false
			for _, r := range res[101:] {
				if !r.Calibrating {
					back = true
					break
				}
			}
			if !back {
				t.Error("still calibrating 100 frames after the jump")
			}
		})
	}
}

func TestMaskedRegionIsIgnored(t *testing.T) {
	checkMasks(t, 320, func(t *testing.T, cfg Config) detector {
		d, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	})
}

// detector is either pipeline: the pure-Go Detector or OpenCV.
type detector interface {
	Detect(y []byte, stride, w, h int) Result
}

// checkMasks runs the detectors that open builds on a 320×240 scene whose
// object crosses the top band only, fed with rows stride bytes apart, and
// checks that masks in pixels or in fractions hide the band, and only the
// band.
func checkMasks(t *testing.T, stride int, open func(t *testing.T, cfg Config) detector) {
	scene, err := camsim.New(camsim.Config{
		Width: 320, Height: 240, Seed: 11, Noise: 6,
		Objects: []camsim.Object{{W: 30, H: 40, Y: 20, Speed: 5, Start: 30, Period: 120, Level: 140}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// The frames are rendered once for the four detectors: under -race
	// rendering cost as much as detecting.
	frame := make([]byte, 320*240)
	clip := make([][]byte, 300)
	for i := range clip {
		scene.Render(i, frame)
		clip[i] = make([]byte, stride*240)
		for y := range 240 {
			copy(clip[i][y*stride:], frame[y*320:(y+1)*320])
		}
	}
	count := func(masks ...string) int {
		cfg := DefaultConfig()
		cfg.Masks = masks
		d := open(t, cfg)
		n := 0
		for _, padded := range clip {
			if d.Detect(padded, stride, 320, 240).Motion {
				n++
			}
		}
		return n
	}
	if n := count(); n < 50 {
		t.Fatalf("unmasked: motion in %d frames, want the object seen", n)
	}
	if n := count("0,0,320,0,320,70,0,70"); n != 0 {
		t.Errorf("band masked in pixels: motion in %d frames", n)
	}
	if n := count("0,0,1,0,1,0.3,0,0.3"); n != 0 {
		t.Errorf("band masked in fractions: motion in %d frames", n)
	}
	if n := count("0,150,320,150,320,240,0,240"); n < 50 {
		t.Errorf("masking elsewhere hid the object: motion in %d frames", n)
	}
}

func TestBoxesInInputCoordinates(t *testing.T) {
	// 7×13 blocks of change on an odd-sized frame must map back inside
	// the frame and around the block.
	const w, h = 333, 251
	frame := make([]byte, w*h)
	for i := range frame {
		frame[i] = uint8(60 + (i*7)%50)
	}
	d, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for range 15 {
		d.Detect(frame, w, w, h)
	}
	moved := append([]byte(nil), frame...)
	block := image.Rect(300, 200, 330, 250)
	for y := block.Min.Y; y < block.Max.Y; y++ {
		for x := block.Min.X; x < block.Max.X; x++ {
			moved[y*w+x] = 250
		}
	}
	r := d.Detect(moved, w, w, h)
	if !r.Motion || len(r.Boxes) != 1 {
		t.Fatalf("want one box, got %+v", r)
	}
	b := r.Boxes[0]
	if !b.In(image.Rect(0, 0, w, h)) || !block.In(b) || !b.In(block.Inset(-15)) {
		t.Fatalf("box %v for change %v in %dx%d", b, block, w, h)
	}
}

func TestStrideIsHonoured(t *testing.T) {
	sc := camsim.Config{Width: 160, Height: 120, Seed: 1, Noise: 3,
		Objects: []camsim.Object{{W: 20, H: 30, Y: 40, Speed: 3, Start: 15, Level: 100}}}
	scene, _ := camsim.New(sc)
	a, _ := New(DefaultConfig())
	b, _ := New(DefaultConfig())
	tight := make([]byte, 160*120)
	padded := make([]byte, 200*120)
	for i := range 60 {
		scene.Render(i, tight)
		for y := range 120 {
			copy(padded[y*200:], tight[y*160:(y+1)*160])
			for x := 160; x < 200; x++ {
				padded[y*200+x] = uint8(x * 37) // garbage beyond the row
			}
		}
		ra := a.Detect(tight, 160, 160, 120)
		rb := b.Detect(padded, 200, 160, 120)
		if ra.Motion != rb.Motion || ra.Area != rb.Area || union(ra.Boxes) != union(rb.Boxes) {
			t.Fatalf("frame %d: stride changed the result: %+v vs %+v", i, ra, rb)
		}
	}
}

func TestSteadyStateDoesNotAllocate(t *testing.T) {
	sc := camsim.Config{Width: 640, Height: 480, Seed: 2, Noise: 6, Drift: 0.1, DriftPeriod: 80,
		Objects: []camsim.Object{{W: 60, H: 120, Y: 200, Speed: 6, Start: 5, Period: 150, Level: 110}}}
	scene, _ := camsim.New(sc)
	frames := make([][]byte, 8)
	for i := range frames {
		frames[i] = make([]byte, 640*480)
		scene.Render(30+i*3, frames[i])
	}
	d, _ := New(DefaultConfig())
	for i := range 30 {
		d.Detect(frames[i%8], 640, 640, 480)
	}
	i := 0
	allocs := testing.AllocsPerRun(48, func() { // each of the 8 frames 6 times
		d.Detect(frames[i%8], 640, 640, 480)
		i++
	})
	if allocs != 0 {
		t.Fatalf("%.1f allocs per frame, want 0", allocs)
	}
}

func TestConfigValidation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Threshold = 0
	cfg.Alpha = 2
	cfg.Masks = []string{"1,2,3"}
	_, err := New(cfg)
	if err == nil {
		t.Fatal("invalid config accepted")
	}
	for _, want := range []string{"threshold: want", "alpha: want", "masks[0]: want"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if _, err := New(DefaultConfig()); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
}

func TestScalerAveragesAreas(t *testing.T) {
	// Each output pixel is the mean of exactly its input span, for widths
	// that are and are not multiples of eight (and of 32, the vector
	// path's blocks), and spans over 256 rows; with and without the vector
	// path where the CPU has one.
	vector := pairSums
	defer func() { pairSums = vector }()
	for _, ps := range []func([]uint16, []byte, int, int, int){vector, nil} {
		pairSums = ps
		testScalerAveragesAreas(t)
	}
}

func testScalerAveragesAreas(t *testing.T) {
	for _, sz := range [][4]int{{64, 48, 16, 12}, {333, 251, 100, 75}, {13, 600, 2, 2}, {160, 120, 133, 100}, {9, 9, 9, 9},
		{480, 360, 133, 100}, {650, 360, 180, 100}, {100, 3000, 20, 16}} {
		w, h, sw, sh := sz[0], sz[1], sz[2], sz[3]
		src := make([]byte, w*h)
		for i := range src {
			src[i] = uint8((i*131 + i/w*17) % 256)
		}
		var s scaler
		if err := s.init(w, h, sw, sh); err != nil {
			t.Fatal(err)
		}
		dst := make([]float32, sw*sh)
		var hist, want [256]int32
		s.run(src, w, dst, &hist)
		for _, v := range dst {
			want[uint8(v+0.5)]++
		}
		if hist != want {
			t.Fatalf("%v: histogram %v, want %v", sz, hist, want)
		}
		for oy := range sh {
			for ox := range sw {
				var sum, n float64
				for y := s.ys[oy]; y < s.ys[oy+1]; y++ {
					for x := s.xs[ox]; x < s.xs[ox+1]; x++ {
						sum += float64(src[y*w+x])
						n++
					}
				}
				if got, want := float64(dst[oy*sw+ox]), sum/n; got-want > 0.01 || want-got > 0.01 {
					t.Fatalf("%v: out(%d,%d) = %.3f, want %.3f", sz, ox, oy, got, want)
				}
			}
		}
	}
}
