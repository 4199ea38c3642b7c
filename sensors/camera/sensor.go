package camera

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Kind is the sensor kind name in board configs.
const Kind = "camera"

// Event kinds raised by a camera.
const (
	EventMotionStart  = "motion_start"
	EventMotionUpdate = "motion_update"
	EventMotionEnd    = "motion_end"
	// EventLiveMotion goes with each live frame (observed, not raised):
	// what the detector saw in it, for a viewer's overlay.
	EventLiveMotion = "live_motion"
)

// The live frames (<name>.live) exist while the dashboard watches them; it
// shows the newest, and each held frame is a JPEG kept alive: two.
func init() { sensors.Register(Kind, New, sensors.Watched{Suffix: ".live", Size: 2}) }

// Sensor is a camera: a Source, the motion detector, and what they tell the
// world model.
type Sensor struct {
	name     string
	o        Opts
	interval time.Duration       // telemetry period
	prio     worldmodel.Priority // of motion_start: High unless the board says otherwise
	clock    clock.Clock         // stamps frames without a time of their own, paces clips and the simulator, times telemetry
	log      *slog.Logger

	// backends, replaceable in tests
	openV4L2 func(Opts, clock.Clock) (Source, error)
	openGoCV func(context.Context, Opts, clock.Clock) (Source, error)

	stats counters
}

type counters struct {
	frames    atomic.Uint64 // processed
	dropped   atomic.Uint64 // by the source (sequence gaps), by the handoff, or bad
	reconnect atomic.Uint64
}

// New builds a camera from its board-config block. It checks the options
// but opens nothing: `edgeagent check` works without the hardware.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	o, err := DecodeOpts(cfg)
	if err != nil {
		return nil, err
	}
	interval := cfg.Interval
	if interval <= 0 {
		interval = time.Second
	}
	return &Sensor{
		name: cfg.Name, o: o, interval: interval, prio: cfg.PriorityOr(worldmodel.High), clock: clock.Or(cfg.Clock),
		log:      slog.Default().With("sensor", cfg.Name),
		openV4L2: defaultV4L2, openGoCV: openGoCV,
	}, nil
}

// DecodeOpts returns the effective options of a camera block: defaults,
// then the block's options, checked, with relative paths resolved against
// the board file's directory.
func DecodeOpts(cfg sensors.Config) (Opts, error) {
	o := DefaultOpts()
	if err := cfg.DecodeOptions(&o); err != nil {
		return Opts{}, err
	}
	if err := o.validate(cfg.Dir); err != nil {
		return Opts{}, err
	}
	return o, nil
}

// Name implements sensors.Sensor.
func (s *Sensor) Name() string { return s.name }

// Opts returns the sensor's effective options.
func (s *Sensor) Opts() Opts { return s.o }

// Open opens the sensor's source once, without reconnecting: for tools
// that read a camera directly (edgeagent motion).
func (s *Sensor) Open(ctx context.Context) (Source, error) {
	switch s.o.Source {
	case "sim":
		return openSim(s.o, s.clock)
	case "file":
		return OpenFile(s.o.Path, FileOpts{FPS: s.o.FPS, Pace: s.o.Pace, Loop: s.o.Loop, Clock: s.clock})
	case "exec":
		return openExec(ctx, s.o, s.clock)
	case "v4l2":
		return s.openV4L2(s.o, s.clock)
	case "gocv":
		return s.openGoCV(ctx, s.o, s.clock)
	}
	return nil, asConfigError(errors.New("options.source: unknown"))
}

// Run captures until ctx ends. Capture runs in its own goroutine and hands
// the newest frame over to detection (older ones are dropped, as a camera
// drops what nobody reads), so a slow detector never backs up the device
// and a stalled device never stops the motion state from timing out.
func (s *Sensor) Run(ctx context.Context, out sensors.Sink) error {
	var det *motion.Detector
	if s.o.Motion.Enabled {
		var err error
		if det, err = motion.New(s.o.Motion.Config); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Clips and the simulator unpaced: every frame, as fast as detection
	// goes. Anything live: the newest frame.
	hand := newHandoff(!s.o.Pace && (s.o.Source == "file" || s.o.Source == "sim"))
	health := sensors.NewHealth(s.clock, s.name, out, worldmodel.Normal)
	captured := make(chan error, 1)
	go func() {
		captured <- sensors.Supervise(ctx, health, s.o.Reconnect, func(ctx context.Context) error {
			return s.capture(ctx, hand, health)
		})
	}()

	p := newProcessor(s, det, out, hand)
	tick := s.clock.NewTicker(s.interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			<-captured
			return nil
		case err := <-captured:
			if ctx.Err() != nil {
				return nil
			}
			return err // permanent: bad configuration
		case f := <-hand.ready:
			p.frame(f)
			hand.release(f)
		case now := <-tick.C():
			p.tick(now)
		}
	}
}

// capture is one session with the source: open it, read until it fails.
func (s *Sensor) capture(ctx context.Context, hand *handoff, health *sensors.Health) error {
	src, err := s.Open(ctx)
	if err != nil {
		if errors.Is(err, ErrConfig) {
			return sensors.Permanent(err)
		}
		return err
	}
	defer src.Close()
	if s.stats.reconnect.Add(1) > 1 {
		s.log.Info("camera reopened", "source", s.o.Source)
	}
	for {
		f := hand.get(ctx)
		if f == nil {
			return nil
		}
		err := src.Next(ctx, f)
		switch {
		case err == nil:
			health.OK()
			hand.put(ctx, f)
			continue
		case ctx.Err() != nil:
			hand.release(f)
			return nil
		case errors.Is(err, ErrBadFrame):
			hand.release(f)
			s.stats.dropped.Add(1)
			s.log.Debug("bad frame", "err", err)
			continue
		case errors.Is(err, io.EOF):
			// A clip that does not loop has ended; the camera stays
			// (its last state in the world model) until stopped.
			hand.release(f)
			s.log.Info("clip ended", "path", s.o.Path)
			<-ctx.Done()
			return nil
		case errors.Is(err, ErrConfig):
			hand.release(f)
			return sensors.Permanent(err)
		default:
			hand.release(f)
			return err
		}
	}
}

// handoff passes frames from capture to detection through three reusable
// frames: one being filled, one ready, one being processed.
//
// From a live camera it is lossy: a new frame replaces one still waiting,
// which is dropped, so detection always works on the newest frame and a
// slow moment never builds up latency. From a clip or the simulator read
// as fast as possible it is lossless: capture waits for detection, since
// there every frame is wanted and nothing is late.
//
// The free frames are a stack, so capture takes the one released last:
// while detection keeps up with the camera two frames take turns and the
// third never gets a buffer (a frame of the sim camera is 77 KB, of a
// 640×480 camera 460 KB). A queue would cycle through all three.
type handoff struct {
	ready    chan *Frame
	lossless bool
	dropped  atomic.Uint64

	freed chan struct{} // one token per frame in free
	mu    sync.Mutex
	free  []*Frame
}

func newHandoff(lossless bool) *handoff {
	h := &handoff{ready: make(chan *Frame, 1), lossless: lossless, freed: make(chan struct{}, 3), free: make([]*Frame, 0, 3)}
	for range 3 {
		h.release(&Frame{})
	}
	return h
}

// get returns a frame to fill, or nil when ctx ends.
func (h *handoff) get(ctx context.Context) *Frame {
	select {
	case <-h.freed:
	case <-ctx.Done():
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.free[len(h.free)-1]
	h.free = h.free[:len(h.free)-1]
	return f
}

// put hands a filled frame over.
func (h *handoff) put(ctx context.Context, f *Frame) {
	if h.lossless {
		select {
		case h.ready <- f:
		case <-ctx.Done():
			h.release(f)
		}
		return
	}
	for {
		select {
		case h.ready <- f:
			return
		default:
		}
		select {
		case old := <-h.ready:
			h.dropped.Add(1)
			h.release(old)
		default:
		}
	}
}

// release returns a frame for reuse; it never blocks, as only three exist.
func (h *handoff) release(f *Frame) {
	h.mu.Lock()
	h.free = append(h.free, f)
	h.mu.Unlock()
	h.freed <- struct{}{}
}

// processor runs detection and reports; it lives on Run's goroutine.
type processor struct {
	s    *Sensor
	det  *motion.Detector
	out  sensors.Sink
	hand *handoff
	src  string // source prefix: "<name>."
	// watcher says whether <name>.live (liveSrc) is watched; nil when the
	// sink cannot say. Both are resolved once: live runs every frame.
	watcher sensors.Watcher
	liveSrc string

	lastSeq   uint64
	haveSeq   bool
	lastFrame time.Time // frame time of the last frame
	lastWall  time.Time // when it arrived
	lastSnap  time.Time
	lastLive  time.Time
	detectSum time.Duration // detector time over the telemetry window
	detectN   int
	window    time.Time
	winFrames uint64
	area      float64
	motion    motionState
}

type motionState struct {
	on         bool
	start      time.Time
	last       time.Time // last frame with motion
	lastUpdate time.Time
	frames     int
	maxArea    float64
}

func newProcessor(s *Sensor, det *motion.Detector, out sensors.Sink, hand *handoff) *processor {
	p := &processor{s: s, det: det, out: out, hand: hand, src: s.name + ".", liveSrc: s.name + ".live", window: s.clock.Now()}
	p.watcher, _ = out.(sensors.Watcher)
	out.Observe(worldmodel.Observation{Source: p.src + "motion", Kind: worldmodel.Reading, Value: 0})
	return p
}

func (p *processor) frame(f *Frame) {
	s := p.s
	s.stats.frames.Add(1)
	p.winFrames++
	if p.haveSeq && f.Seq > p.lastSeq+1 {
		s.stats.dropped.Add(f.Seq - p.lastSeq - 1)
	}
	p.lastSeq, p.haveSeq = f.Seq, true
	p.lastFrame, p.lastWall = f.Time, s.clock.Now()
	now := f.Time

	var r motion.Result
	var took time.Duration
	if p.det != nil {
		start := s.clock.Now()
		r = p.det.Detect(f.Y, f.YStride, f.Width, f.Height)
		took = s.clock.Since(start)
		p.detectSum += took
		p.detectN++
		p.area = r.Area
		p.step(now, r, f)
	}
	if iv := s.o.SnapshotInterval; iv > 0 && (p.lastSnap.IsZero() || now.Sub(p.lastSnap) >= iv || now.Before(p.lastSnap)) {
		p.lastSnap = now
		p.snapshot(p.src+"snapshot", f, now, s.o.SnapshotQuality)
	}
	p.live(now, r, took, f)
}

// live stores the frame as <name>.live, with its motion boxes, when a
// viewer watches and the live interval has passed; otherwise it costs one
// Watched call.
func (p *processor) live(now time.Time, r motion.Result, took time.Duration, f *Frame) {
	o := p.s.o
	if o.LiveFPS <= 0 || p.watcher == nil || !p.watcher.Watched(p.liveSrc) {
		return
	}
	// A little slack, as frames paced at exactly LiveFPS must not be
	// skipped for arriving a millisecond early.
	every := time.Duration(float64(time.Second) / o.LiveFPS)
	if !p.lastLive.IsZero() && now.Sub(p.lastLive) < every-every/10 && !now.Before(p.lastLive) {
		return
	}
	p.lastLive = now
	ev := p.event(now, EventLiveMotion, worldmodel.Low, r, f, "")
	ev.Data["motion"] = p.motion.on
	ev.Data["detect_ms"] = round2(float64(took.Microseconds()) / 1000)
	p.snapshot(p.liveSrc, f, now, o.LiveQuality)
	p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "live_motion", Kind: worldmodel.EventRef, Event: &ev})
}

// step advances the motion state machine with one frame's result.
func (p *processor) step(now time.Time, r motion.Result, f *Frame) {
	m := &p.motion
	mo := p.s.o.Motion
	if r.Motion {
		m.last = now
		m.frames++
		m.maxArea = max(m.maxArea, r.Area)
		if !m.on {
			*m = motionState{on: true, start: now, last: now, lastUpdate: now, frames: 1, maxArea: r.Area}
			p.snapshot(p.src+"motion_snapshot", f, now, p.s.o.SnapshotQuality)
			p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "motion", Kind: worldmodel.Reading, Value: 1})
			p.out.Raise(p.event(now, EventMotionStart, p.s.prio, r, f,
				fmt.Sprintf("motion in %d region(s), %.1f%% of the frame", len(r.Boxes), r.Area)))
			return
		}
		if now.Sub(m.lastUpdate) >= mo.UpdateInterval {
			m.lastUpdate = now
			// Recorded, not raised: an update is news for whoever looks
			// at the world, not a reason to interrupt the agent again.
			ev := p.event(now, EventMotionUpdate, worldmodel.Low, r, f,
				fmt.Sprintf("%d region(s), %.1f%% of the frame", len(r.Boxes), r.Area))
			p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "motion_update", Kind: worldmodel.EventRef, Event: &ev})
		}
		return
	}
	if m.on && now.Sub(m.last) >= mo.OffDelay {
		p.end(now, "no motion for "+mo.OffDelay.String())
	}
}

func (p *processor) end(now time.Time, why string) {
	m := &p.motion
	m.on = false
	dur := m.last.Sub(m.start)
	p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "motion", Kind: worldmodel.Reading, Value: 0})
	p.out.Raise(worldmodel.Event{
		Time: now, Kind: EventMotionEnd, Source: p.s.name, Priority: worldmodel.Normal,
		Message: fmt.Sprintf("motion ended after %s (%s)", dur.Round(100*time.Millisecond), why),
		Data: map[string]any{
			"duration_s": dur.Seconds(), "frames": m.frames, "max_area_pct": round2(m.maxArea), "reason": why,
		},
	})
}

func (p *processor) event(now time.Time, kind string, prio worldmodel.Priority, r motion.Result, f *Frame, msg string) worldmodel.Event {
	boxes := make([][4]int, len(r.Boxes))
	for i, b := range r.Boxes {
		boxes[i] = [4]int{b.Min.X, b.Min.Y, b.Max.X, b.Max.Y}
	}
	data := map[string]any{
		"boxes": boxes, "area_pct": round2(r.Area), "width": f.Width, "height": f.Height, "frame": f.Seq,
	}
	if kind == EventMotionStart {
		data["snapshot"] = p.src + "motion_snapshot"
	}
	return worldmodel.Event{Time: now, Kind: kind, Source: p.s.name, Priority: prio, Message: msg, Data: data}
}

func round2(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }

// tick reports telemetry and ends motion on a camera that stopped sending
// frames (the state machine otherwise runs on frame times).
func (p *processor) tick(now time.Time) {
	s := p.s
	if p.motion.on && !p.lastWall.IsZero() && now.Sub(p.lastWall) >= s.o.Motion.OffDelay {
		p.end(p.lastFrame.Add(now.Sub(p.lastWall)), "no frames")
	}
	span := now.Sub(p.window).Seconds()
	if span <= 0 {
		return
	}
	fps := float64(p.winFrames) / span
	p.window, p.winFrames = now, 0
	drops := s.stats.dropped.Load() + p.hand.dropped.Load()
	p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "fps", Kind: worldmodel.Reading, Value: round2(fps), Unit: "fps"})
	p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "drops", Kind: worldmodel.Reading, Value: float64(drops), Unit: "frames"})
	if p.det != nil {
		on := 0.0
		if p.motion.on {
			on = 1
		}
		p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "motion", Kind: worldmodel.Reading, Value: on})
		p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "motion_area", Kind: worldmodel.Reading, Value: round2(p.area), Unit: "%"})
		if p.detectN > 0 {
			ms := float64(p.detectSum.Microseconds()) / 1000 / float64(p.detectN)
			p.out.Observe(worldmodel.Observation{Time: now, Source: p.src + "detect_ms", Kind: worldmodel.Reading, Value: round2(ms), Unit: "ms"})
			p.detectSum, p.detectN = 0, 0
		}
	}
}

// snapshot stores the frame as a JPEG blob. The bytes are a fresh copy:
// the world model keeps them while the source reuses its buffers.
func (p *processor) snapshot(source string, f *Frame, now time.Time, quality int) {
	data, err := snapshotJPEG(f, quality, p.s.o.SnapshotMaxBytes)
	if err != nil {
		p.s.log.Warn("snapshot", "err", err)
		return
	}
	p.out.Observe(worldmodel.Observation{Time: now, Source: source, Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: data}})
}

// snapshotJPEG returns the frame as a JPEG of at most maxBytes: the
// device's own JPEG when it sent one and it fits, else an encoding of the
// frame, halved in size until it fits.
func snapshotJPEG(f *Frame, quality, maxBytes int) ([]byte, error) {
	if f.JPEG != nil && len(f.JPEG) <= maxBytes {
		return bytes.Clone(f.JPEG), nil
	}
	img := f.Image()
	for range 4 {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: quality}); err != nil {
			return nil, err
		}
		if buf.Len() <= maxBytes {
			return buf.Bytes(), nil
		}
		img = halve(img)
	}
	return nil, fmt.Errorf("frame does not fit in %d bytes even at 1/16 size", maxBytes)
}

// halve returns img at half its width and height (2×2 averages of luma;
// chroma sampled), for snapshots over their size budget.
func halve(img image.Image) image.Image {
	b := img.Bounds()
	w, h := max(1, b.Dx()/2), max(1, b.Dy()/2)
	switch m := img.(type) {
	case *image.YCbCr:
		out := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				sx, sy := b.Min.X+2*x, b.Min.Y+2*y
				i := m.YOffset(sx, sy)
				v := (int(m.Y[i]) + int(m.Y[i+1]) + int(m.Y[i+m.YStride]) + int(m.Y[i+m.YStride+1]) + 2) / 4
				o := out.YOffset(x, y)
				out.Y[o] = uint8(v)
				c := m.COffset(sx, sy)
				out.Cb[out.COffset(x, y)], out.Cr[out.COffset(x, y)] = m.Cb[c], m.Cr[c]
			}
		}
		return out
	default:
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				g.Set(x, y, img.At(b.Min.X+2*x, b.Min.Y+2*y))
			}
		}
		return g
	}
}
