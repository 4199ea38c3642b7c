//go:build linux

package camera

import (
	"context"
	"errors"
	"fmt"
	"image"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/blackjack/webcam"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// fakeCam is a V4L2 device as webcam sees it: what it offers, and a
// stream of frames that can end the way an unplugged USB camera does.
type fakeCam struct {
	formats map[webcam.PixelFormat]string
	sizes   map[webcam.PixelFormat][]webcam.FrameSize
	rates   map[string][]webcam.FrameRate // "fmt wxh"

	mu        sync.Mutex
	set       v4l2Mode
	setFPS    float32
	buffers   uint32
	streaming bool
	closed    bool
	frame     func(i int) ([]byte, error) // frame i, or the error GetFrame returns
	timeout   bool                        // WaitForFrame always times out
	n         int
	released  int
}

func rateKey(f webcam.PixelFormat, w, h uint32) string {
	return fmt.Sprintf("%s %dx%d", formatName(f), w, h)
}

func discrete(w, h uint32) webcam.FrameSize {
	return webcam.FrameSize{MinWidth: w, MaxWidth: w, MinHeight: h, MaxHeight: h}
}

func fps(rates ...uint32) []webcam.FrameRate {
	var out []webcam.FrameRate
	for _, r := range rates {
		out = append(out, webcam.FrameRate{MinNumerator: 1, MaxNumerator: 1, MinDenominator: r, MaxDenominator: r})
	}
	return out
}

func (c *fakeCam) GetSupportedFormats() map[webcam.PixelFormat]string { return c.formats }
func (c *fakeCam) GetSupportedFrameSizes(f webcam.PixelFormat) []webcam.FrameSize {
	return c.sizes[f]
}
func (c *fakeCam) GetSupportedFramerates(f webcam.PixelFormat, w, h uint32) []webcam.FrameRate {
	return c.rates[rateKey(f, w, h)]
}
func (c *fakeCam) SetImageFormat(f webcam.PixelFormat, w, h uint32) (webcam.PixelFormat, uint32, uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.set = v4l2Mode{Format: f, Width: int(w), Height: int(h)}
	return f, w, h, nil
}
func (c *fakeCam) SetFramerate(f float32) error { c.setFPS = f; return nil }
func (c *fakeCam) SetBufferCount(n uint32) error {
	c.buffers = n
	return nil
}
func (c *fakeCam) StartStreaming() error { c.streaming = true; return nil }
func (c *fakeCam) WaitForFrame(timeout uint32) error {
	if c.timeout {
		time.Sleep(time.Duration(timeout) * time.Millisecond / 10)
		return new(webcam.Timeout)
	}
	time.Sleep(2 * time.Millisecond)
	return nil
}
func (c *fakeCam) GetFrame() ([]byte, uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, err := c.frame(c.n)
	c.n++
	return b, uint32(c.n % 4), err
}
func (c *fakeCam) ReleaseFrame(uint32) error {
	c.mu.Lock()
	c.released++
	c.mu.Unlock()
	return nil
}
func (c *fakeCam) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return nil
}

// typical: a USB 2 webcam that sends YUYV at 30 fps only up to 640×480.
func typical() *fakeCam {
	return &fakeCam{
		formats: map[webcam.PixelFormat]string{fmtYUYV: "YUYV 4:2:2", fmtMJPEG: "Motion-JPEG", fourcc("H264"): "H.264"},
		sizes: map[webcam.PixelFormat][]webcam.FrameSize{
			fmtYUYV:  {discrete(320, 240), discrete(640, 480), discrete(1280, 720)},
			fmtMJPEG: {discrete(320, 240), discrete(640, 480), discrete(1280, 720), discrete(1920, 1080)},
		},
		rates: map[string][]webcam.FrameRate{
			rateKey(fmtYUYV, 320, 240):    fps(30, 15, 10, 5),
			rateKey(fmtYUYV, 640, 480):    fps(30, 15, 10, 5),
			rateKey(fmtYUYV, 1280, 720):   fps(10, 5),
			rateKey(fmtMJPEG, 320, 240):   fps(30, 15),
			rateKey(fmtMJPEG, 640, 480):   fps(30, 15),
			rateKey(fmtMJPEG, 1280, 720):  fps(30, 15),
			rateKey(fmtMJPEG, 1920, 1080): fps(30),
		},
	}
}

func TestNegotiate(t *testing.T) {
	stepwise := &fakeCam{
		formats: map[webcam.PixelFormat]string{fmtGrey: "Greyscale"},
		sizes: map[webcam.PixelFormat][]webcam.FrameSize{fmtGrey: {{
			MinWidth: 160, MaxWidth: 1920, StepWidth: 16, MinHeight: 120, MaxHeight: 1080, StepHeight: 8}}},
		rates: map[string][]webcam.FrameRate{rateKey(fmtGrey, 640, 480): {{
			MinNumerator: 1, MaxNumerator: 1, StepNumerator: 1, MinDenominator: 1, MaxDenominator: 60, StepDenominator: 1}}},
	}
	for _, c := range []struct {
		cam    *fakeCam
		format string
		w, h   int
		fps    float64
		want   string
	}{
		{typical(), "auto", 640, 480, 10, "yuyv 640x480 @10"},    // raw when it keeps up: no decoding
		{typical(), "auto", 1280, 720, 30, "mjpeg 1280x720 @30"}, // raw cannot: MJPEG
		{typical(), "auto", 1280, 720, 8, "yuyv 1280x720 @10"},   // lowest rate at or above the request
		{typical(), "yuyv", 1280, 720, 30, "yuyv 1280x720 @10"},  // forced: the best it has
		{typical(), "mjpeg", 800, 600, 15, "mjpeg 1280x720 @15"}, // smallest size covering the request
		{typical(), "mjpeg", 4000, 3000, 30, "mjpeg 1920x1080 @30"},
		{typical(), "auto", 640, 480, 60, "yuyv 640x480 @30"}, // nobody does 60: the fastest
		{stepwise, "auto", 650, 485, 10, "grey 640x480 @10"},  // on the size steps, any rate in range
	} {
		m, err := negotiate(c.cam, c.format, c.w, c.h, c.fps)
		if err != nil {
			t.Errorf("%s %dx%d@%g: %v", c.format, c.w, c.h, c.fps, err)
			continue
		}
		if got := fmt.Sprintf("%s %dx%d @%g", formatName(m.Format), m.Width, m.Height, m.FPS); got != c.want {
			t.Errorf("%s %dx%d@%g: got %s, want %s", c.format, c.w, c.h, c.fps, got, c.want)
		}
	}
	h264 := &fakeCam{formats: map[webcam.PixelFormat]string{fourcc("H264"): "H.264"}}
	_, err := negotiate(h264, "auto", 640, 480, 10)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "H264") {
		t.Errorf("H.264-only camera: %v, want a configuration error naming what it offers", err)
	}
	if _, err := negotiate(typical(), "grey", 640, 480, 10); !errors.Is(err, ErrConfig) {
		t.Errorf("grey on a camera without it: %v", err)
	}
}

func yuyvFrame(w, h int, y byte) []byte {
	b := make([]byte, w*h*2)
	for i := 0; i < w*h/2; i++ {
		b[4*i], b[4*i+1], b[4*i+2], b[4*i+3] = y, 100, y+1, 200
	}
	return b
}

func v4l2Opts(t testing.TB, w, h int, format string) Opts {
	o := DefaultOpts()
	o.Source, o.Width, o.Height, o.Format = "v4l2", w, h, format
	if err := o.validate(""); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestV4L2Frames(t *testing.T) {
	const w, h = 64, 48
	cam := typical()
	cam.sizes[fmtYUYV] = append(cam.sizes[fmtYUYV], discrete(w, h))
	cam.rates[rateKey(fmtYUYV, w, h)] = fps(30, 10)
	cam.frame = func(i int) ([]byte, error) {
		if i == 2 {
			return yuyvFrame(w, h-1, 0)[:100], nil // short: a bad frame
		}
		return yuyvFrame(w, h, byte(10*i)), nil
	}
	src, err := openV4L2(v4l2Opts(t, w, h, "yuyv"), clock.Real(), func(string) (v4l2Device, error) { return cam, nil })
	if err != nil {
		t.Fatal(err)
	}
	if cam.set.Format != fmtYUYV || cam.set.Width != w || cam.setFPS != 10 || cam.buffers != 4 || !cam.streaming {
		t.Fatalf("device set to %+v @%g with %d buffers, streaming %v", cam.set, cam.setFPS, cam.buffers, cam.streaming)
	}
	var f Frame
	for i := range 2 {
		if err := src.Next(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
		if f.Width != w || f.Height != h || f.Y[0] != byte(10*i) || f.Y[1] != byte(10*i+1) || f.Y[w*h-1] != byte(10*i+1) ||
			f.Ratio != image.YCbCrSubsampleRatio422 || f.Cb[0] != 100 || f.Cr[len(f.Cr)-1] != 200 || f.JPEG != nil {
			t.Fatalf("frame %d: %dx%d Y %v… Cb %d Cr %d", i, f.Width, f.Height, f.Y[:2], f.Cb[0], f.Cr[0])
		}
	}
	if err := src.Next(context.Background(), &f); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("short buffer: %v, want ErrBadFrame", err)
	}
	if err := src.Next(context.Background(), &f); err != nil {
		t.Fatalf("after a bad frame: %v", err)
	}
	if cam.released != cam.n {
		t.Errorf("%d buffers taken, %d given back", cam.n, cam.released)
	}
	src.Close()
	if !cam.closed {
		t.Error("device not closed")
	}
}

func TestV4L2MJPEGWithoutHuffmanTables(t *testing.T) {
	const w, h = 96, 64
	y := sceneFrames(t, w, h, 1)[0]
	jpg := withoutDHT(encodeJPEG(t, y, w, h))
	cam := typical()
	cam.sizes[fmtMJPEG] = []webcam.FrameSize{discrete(w, h)}
	cam.frame = func(int) ([]byte, error) { return jpg, nil }
	src, err := openV4L2(v4l2Opts(t, w, h, "mjpeg"), clock.Real(), func(string) (v4l2Device, error) { return cam, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var f Frame
	if err := src.Next(context.Background(), &f); err != nil {
		t.Fatal(err)
	}
	if d := meanAbsDiff(y, &f); d > 3 || f.JPEG == nil || &f.JPEG[0] == &jpg[0] {
		t.Fatalf("luma off by %.1f; JPEG kept %v (must be a copy of the driver's buffer)", d, f.JPEG != nil)
	}
}

func TestV4L2StallIsAnError(t *testing.T) {
	cam := typical()
	cam.timeout = true
	src, err := openV4L2(v4l2Opts(t, 640, 480, "auto"), clock.Real(), func(string) (v4l2Device, error) { return cam, nil })
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	src.(*v4l2Source).stall = 600 * time.Millisecond
	var f Frame
	start := time.Now()
	err = src.Next(context.Background(), &f)
	if !errors.Is(err, errStalled) || time.Since(start) < 600*time.Millisecond {
		t.Fatalf("%v after %v, want a stall error after 600 ms", err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := src.Next(ctx, &f); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting with a context: %v", err)
	}
}

// Unplugging a USB camera: frames stop with ENODEV, the device node is gone
// for a while (ENOENT), then the camera comes back. The sensor reopens it
// with backoff and frames flow again; the world sees a fault and a recovery.
func TestV4L2ReopensWithBackoff(t *testing.T) {
	const w, h = 64, 48
	newCam := func(frames int) *fakeCam {
		c := typical()
		c.sizes[fmtYUYV] = []webcam.FrameSize{discrete(w, h)}
		c.frame = func(i int) ([]byte, error) {
			if frames >= 0 && i >= frames {
				return nil, syscall.ENODEV
			}
			return yuyvFrame(w, h, byte(i)), nil
		}
		return c
	}
	var (
		mu    sync.Mutex
		opens []time.Time
		cams  []*fakeCam
	)
	opener := func(string) (v4l2Device, error) {
		mu.Lock()
		defer mu.Unlock()
		opens = append(opens, time.Now())
		switch len(opens) {
		case 1:
			cams = append(cams, newCam(5))
		case 2, 3:
			return nil, syscall.ENOENT
		default:
			cams = append(cams, newCam(-1))
		}
		return cams[len(cams)-1], nil
	}
	cfg := sensortest.Board(t, "sim", fmt.Sprintf(`
- name: cam
  kind: camera
  interval: 10ms
  options:
    source: v4l2
    device: /dev/video7
    width: %d
    height: %d
    reconnect: {initial: 20ms, max: 1s}
    snapshot_interval: 0s
`, w, h))
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.(*Sensor).openV4L2 = func(o Opts, clk clock.Clock) (Source, error) { return openV4L2(o, clk, opener) }
	rec := sensortest.NewRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, rec) }()
	rec.WaitFor(t, 10*time.Second, "fault, then recovery", func() bool {
		return len(rec.Events(sensors.EventRecovered)) == 1
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opens) != 4 {
		t.Fatalf("%d opens, want 4 (ok, gone, gone, back)", len(opens))
	}
	// Backoff doubles from 20 ms (±20 % jitter): at least 16, 32, 64 ms
	// between attempts; a scheduler can only add to that.
	for i, minGap := range []time.Duration{16, 32, 64} {
		if gap := opens[i+1].Sub(opens[i]); gap < minGap*time.Millisecond {
			t.Errorf("attempt %d came %v after the previous, want ≥ %v ms", i+2, gap, minGap)
		}
	}
	if !cams[0].closed || !cams[1].closed {
		t.Error("a device was left open")
	}
	if got := rec.EventKinds(); !strings.HasPrefix(got, "sensor_fault,sensor_recovered") {
		t.Errorf("events %s", got)
	}
	if cams[1].n == 0 {
		t.Error("no frames read after the camera came back")
	}
}
