package mic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Kind is the registry key of this sensor kind.
const Kind = "mic"

// Event kinds the mic raises.
const (
	EventWakeWord      = "wake_word"
	EventVoiceCommand  = "voice_command"
	EventCommandFailed = "voice_command_failed"
	EventLoudNoise     = "loud_noise"
)

// The audio (<name>.audio, 250 ms chunks of 8 KB) exists while the
// recorder watches it, which reads the chunks as they come: 16 are 4 s.
func init() { sensors.Register(Kind, New, sensors.Watched{Suffix: ".audio", Size: 16}) }

// Sensor is a microphone with its detectors.
type Sensor struct {
	name     string
	o        Opts
	src      Source
	interval time.Duration
	heads    []*wakeword.Head
	loudPrio worldmodel.Priority
	wakePrio worldmodel.Priority
	line     *duplex.Line // the robot's speaker, for half-duplex
	clock    clock.Clock  // stamps audio and events, paces retries; the device keeps its own sample rate
	log      *slog.Logger
}

// New builds a mic sensor from its config block. It loads the wake-word
// head but opens no device.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	o, err := DecodeOpts(cfg)
	if err != nil {
		return nil, err
	}
	clk := clock.Or(cfg.Clock)
	src, err := NewSource(o, clk)
	if err != nil {
		return nil, err
	}
	s := &Sensor{name: cfg.Name, o: o, src: src, interval: cfg.Interval, line: duplex.Get(cfg.Name), clock: clk, log: slog.Default().With("sensor", cfg.Name)}
	if sim, ok := src.(*SimSource); ok {
		sim.Air = s.line // the sim microphone hears the sim speaker
	}
	if s.interval <= 0 {
		s.interval = 100 * time.Millisecond // 10 Hz level readings
	}
	s.loudPrio, _ = worldmodel.ParsePriority(o.LoudPriority)
	// The wake word is the primary event: High (it preempts a running
	// cycle) unless the board's priority for this sensor says otherwise.
	s.wakePrio = cfg.PriorityOr(worldmodel.High)
	if o.WakeWord.Detector != "off" {
		heads, err := LoadHeads(o.WakeWord)
		if err != nil {
			return nil, err // a broken model file is refused at start
		}
		s.heads = heads
	}
	return s, nil
}

// LoadHeads loads the trained head the options name (none for "none").
// A head trained over another frontend than the product's is refused: its
// scores would mean nothing.
func LoadHeads(o WakeWordOpts) ([]*wakeword.Head, error) {
	var h *wakeword.Head
	var err error
	switch o.Model {
	case ModelNone, "":
		return nil, nil
	case ModelBuiltin:
		h, err = wakeword.Builtin()
	default:
		h, err = wakeword.LoadHead(o.Model)
	}
	if err != nil {
		return nil, fmt.Errorf("wakeword.model: %w", err)
	}
	if h.Info.Frontend != wakeword.SpeechFrontendID {
		return nil, fmt.Errorf("wakeword.model: %w: trained over another frontend than this build's (%s); retrain it", wakeword.ErrBadModel, wakeword.SpeechFrontendID)
	}
	// The head runs over the speech frontend, whose weights a robot-profile
	// binary reads from beside itself: missing or damaged, they are refused
	// here, at start, rather than when the sensor first runs. They load once
	// per process; the sensor's stream shares them.
	if _, err := speechembed.New(); err != nil {
		return nil, fmt.Errorf("wakeword.model: %w", err)
	}
	return []*wakeword.Head{h}, nil
}

// Name is the sensor's name.
func (s *Sensor) Name() string { return s.name }

// Opts are the decoded options.
func (s *Sensor) Opts() Opts { return s.o }

// Heads are the trained wake-word heads in use by the built-in detector.
func (s *Sensor) Heads() []*wakeword.Head { return s.heads }

// Source is the configured source.
func (s *Sensor) Source() Source { return s.src }

// Run captures and processes audio until ctx ends, reopening a failed
// source with backoff.
func (s *Sensor) Run(ctx context.Context, out sensors.Sink) error {
	p, err := s.newPipeline(out)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p.start(ctx, &wg)
	defer p.stop()
	health := sensors.NewHealth(s.clock, s.name, out, worldmodel.Normal)
	return sensors.Supervise(ctx, health, s.o.Reconnect, func(ctx context.Context) error {
		st, err := s.src.Open(ctx)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return sensors.Permanent(err)
			}
			return err
		}
		s.log.Info("microphone open", "source", s.src.String())
		stop := context.AfterFunc(ctx, func() { st.Close() })
		defer stop()
		defer st.Close()
		err = p.consume(ctx, st, health)
		if err == io.EOF {
			// A file played to its end: stay idle rather than replay it
			// as if the device had failed.
			s.log.Info("audio source ended", "source", s.src.String())
			<-ctx.Done()
			return nil
		}
		return err
	})
}

// pipeline is the processing of one sensor: levels, VAD and wake word, the
// Wyoming wake client, and the capture of commands.
type pipeline struct {
	s       *Sensor
	out     sensors.Sink
	det     *wakeword.Heads // the built-in detector, and the VAD
	remote  *remoteWake
	dets    []wakeword.Detection
	fed     int64 // samples the detector has heard
	buf     []int16
	meter   audio.Meter
	window  int // samples per level reading
	speech  int // hops with speech in the current window
	hops    int
	lastLdn time.Time
	dropped uint64
	capture *capture
	tap     *tap // <name>.audio, while watched
	ctx     context.Context
	wg      *sync.WaitGroup
	// replay: the audio is a recording's, whose spoken commands are
	// recorded too; no command is captured.
	replay bool
}

func (s *Sensor) newPipeline(out sensors.Sink) (*pipeline, error) {
	heads := s.heads
	if s.o.WakeWord.Detector == "off" {
		heads = nil
	}
	var fe wakeword.Frontend
	if len(heads) > 0 {
		var err error
		if fe, err = wakeword.NewSpeechFrontend(); err != nil {
			return nil, err
		}
	}
	det := wakeword.NewHeads(heads, fe, wakeword.HeadOptions{Threshold: s.o.WakeWord.ModelThreshold,
		Refractory: s.o.WakeWord.Refractory, VAD: s.o.VADOptions()})
	p := &pipeline{s: s, out: out, det: det, buf: make([]int16, 1600),
		window: max(wakeword.HopSamples, int(s.interval.Seconds()*audio.Rate)), tap: newTap(s.name+".audio", out)}
	if s.o.WakeWord.Detector == "wyoming" {
		p.remote = newRemoteWake(s.o.WakeWord.Wyoming, s.o.WakeWord.WyomingNames, s.o.Reconnect, s.clock, s.log)
	}
	return p, nil
}

func (p *pipeline) start(ctx context.Context, wg *sync.WaitGroup) {
	p.ctx, p.wg = ctx, wg
	if p.remote != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.remote.run(ctx)
		}()
	}
}

// stop ends a command capture cut short by shutdown.
func (p *pipeline) stop() {
	if p.capture != nil {
		p.capture.finish()
		p.capture = nil
	}
}

// consume reads a stream until it fails or ctx ends. Everything the
// audio causes (levels, wake words, the half-duplex check) is judged at
// the time it was captured, not at the time this goroutine gets to it: on
// a loaded machine the two can be seconds apart.
func (p *pipeline) consume(ctx context.Context, st Stream, health *sensors.Health) error {
	base := st.Dropped()
	last := p.s.clock.Now() // when the newest audio read was captured
	for {
		n, at, err := st.Read(p.buf)
		if n > 0 {
			health.OK()
			last = at
			p.process(p.buf[:n], at)
			if d := st.Dropped() - base; d > 0 {
				p.dropped += d
				base += d
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		// Remote detections are polled here, on the audio goroutine, so
		// that wake handling never races with capture. The server heard
		// audio up to the newest read at most: that is their time.
		if p.remote != nil {
			p.pollRemote(last)
		}
	}
}

// process handles samples whose last one was captured at now.
func (p *pipeline) process(samples []int16, now time.Time) {
	if p.remote != nil && p.remote.up.Load() {
		p.remote.send(samples)
	}
	if p.capture != nil {
		p.capture.add(samples)
	}
	p.dets = p.det.Process(p.dets[:0], samples, p.onHop)
	p.fed += int64(len(samples))
	p.tap.add(samples, now, p.out)
	for _, d := range p.dets {
		if p.remote != nil && p.remote.up.Load() {
			continue // the server is the detector while it is reachable
		}
		// The window the head fired on ended before the newest sample:
		// by up to a read, or by the pre-roll for a window replayed when
		// the gate opened.
		heard := now.Add(d.End - time.Duration(p.fed)*time.Second/audio.Rate)
		if p.selfHeard(heard, d.Score) {
			continue
		}
		p.wake(now, d.Name, "builtin", map[string]any{"score": round3(d.Score)})
	}
	// Levels.
	for len(samples) > 0 {
		n := min(len(samples), p.window-p.meter.N())
		p.meter.Add(samples[:n])
		samples = samples[n:]
		if p.meter.N() >= p.window {
			p.reading(now)
		}
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func (p *pipeline) onHop(speech bool) {
	p.tap.hop(speech)
	p.hops++
	if speech {
		p.speech++
	}
	if p.capture != nil {
		if p.capture.hop(speech) {
			p.capture.finish()
			p.capture = nil
		}
	}
}

func (p *pipeline) reading(now time.Time) {
	peak, rms := p.meter.Read()
	name := p.s.name
	obs := func(q string, v float64, unit string) {
		p.out.Observe(worldmodel.Observation{Time: now, Source: name + "." + q, Kind: worldmodel.Reading, Value: v, Unit: unit})
	}
	obs("peak_dbfs", math.Round(peak*10)/10, "dBFS")
	obs("rms_dbfs", math.Round(rms*10)/10, "dBFS")
	obs("noise_dbfs", math.Round(p.det.NoiseFloorDBFS()*10)/10, "dBFS")
	sp := 0.0
	if p.hops > 0 && p.speech*2 >= p.hops {
		sp = 1
	}
	obs("speech", sp, "")
	obs("dropped", float64(p.dropped), "samples")
	p.hops, p.speech = 0, 0
	if p.s.o.LoudDBFS < 0 && peak >= p.s.o.LoudDBFS && now.Sub(p.lastLdn) >= p.s.o.LoudCooldown {
		p.lastLdn = now
		p.out.Raise(worldmodel.Event{Time: now, Kind: EventLoudNoise, Source: name, Priority: p.s.loudPrio,
			Message: fmt.Sprintf("loud noise: peak %.1f dBFS", peak),
			Data:    map[string]any{"peak_dbfs": math.Round(peak*10) / 10, "rms_dbfs": math.Round(rms*10) / 10}})
	}
}

// wake handles a wake word from either detector.
func (p *pipeline) wake(now time.Time, word, detector string, data map[string]any) {
	if p.capture != nil {
		return // already listening for a command
	}
	data["name"] = word
	data["detector"] = detector
	stt := p.s.o.STT.Wyoming != ""
	data["stt"] = stt
	msg := fmt.Sprintf("wake word %q (%s detector)", word, detector)
	if !stt {
		msg += "; no speech-to-text backend is configured, so no spoken command follows"
	}
	p.s.log.Info("wake word", "word", word, "detector", detector, "score", data["score"])
	p.out.Raise(worldmodel.Event{Time: now, Kind: EventWakeWord, Source: p.s.name, Priority: p.s.wakePrio, Message: msg, Data: data})
	if stt && !p.replay {
		p.capture = newCapture(p, word, now)
	}
}

func (p *pipeline) pollRemote(now time.Time) {
	for {
		select {
		case d := <-p.remote.det:
			if p.selfHeard(now, -1) { // the server gives no score: raise mutes it too
				continue
			}
			p.wake(now, d.Name, "wyoming", map[string]any{"server": p.remote.addr})
		default:
			return
		}
	}
}

// selfHeard reports a detection (score -1: unknown) of audio captured at
// heard to be ignored because the robot's speaker was playing then or had
// just stopped: it is probably the robot's own voice.
func (p *pipeline) selfHeard(heard time.Time, score float64) bool {
	h := p.s.o.HalfDuplex
	if h.Mode == "off" || !p.s.line.Speaking(heard, h.Tail) || (h.Mode == "raise" && score >= h.Threshold) {
		return false
	}
	p.s.log.Debug("wake word ignored while the robot speaks", "mode", h.Mode, "score", score)
	return true
}

// capture records the speech after a wake word and streams it to the
// speech-to-text server as it comes, so the transcript is ready soon after
// the speaker stops.
type capture struct {
	p        *pipeline
	word     string
	started  time.Time
	hops     int
	heard    bool // the command has begun
	silent   bool // the VAD has been silent since the wake word
	talk     int  // hops of speech since the wake word
	postWake int  // hops of unbroken speech that count as a command
	quiet    int  // hops of silence since the last speech
	samples  int
	chunks   chan []int16
	pending  []int16
}

func newCapture(p *pipeline, word string, now time.Time) *capture {
	hang := p.s.o.VAD.Hangover
	if hang <= 0 {
		hang = 250 * time.Millisecond // the VAD's default
	}
	c := &capture{p: p, word: word, started: now,
		// Speech must outlast the VAD's hangover after the wake phrase,
		// with 100 ms to spare, to count as a command spoken without a
		// pause.
		postWake: int(hang/(10*time.Millisecond)) + 10,
		// Room for the longest command: the STT connection may still be
		// opening while the speaker talks, and nothing must be lost.
		chunks: make(chan []int16, int(p.s.o.STT.MaxCommand/(100*time.Millisecond))+8)}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		c.transcribe(p.ctx)
	}()
	return c
}

func (c *capture) add(s []int16) {
	c.pending = append(c.pending, s...)
	c.samples += len(s)
	if len(c.pending) >= 1600 {
		c.flush()
	}
}

func (c *capture) flush() {
	if len(c.pending) == 0 {
		return
	}
	select {
	case c.chunks <- c.pending:
	default:
		// Cannot happen within MaxCommand; if it did, losing audio beats
		// blocking the microphone.
	}
	c.pending = nil
}

// hop advances the capture by 10 ms; it reports when the command is over.
func (c *capture) hop(speech bool) bool {
	o := c.p.s.o.STT
	c.hops++
	el := time.Duration(c.hops) * 10 * time.Millisecond
	if speech {
		c.talk++
		c.quiet = 0
		// The VAD is usually still in its hangover after the wake phrase:
		// that is not the command. Speech after a silence is, and so is
		// speech that outlasts the hangover (no pause after the phrase).
		if c.silent || c.talk > c.postWake {
			c.heard = true
		}
	} else {
		c.silent = true
		c.quiet++
	}
	switch {
	case el >= o.MaxCommand:
		return true
	case c.heard && time.Duration(c.quiet)*10*time.Millisecond >= o.EndSilence:
		return true
	case !c.heard && el >= o.NoSpeechTimeout:
		return true
	}
	return false
}

func (c *capture) finish() {
	c.flush()
	if !c.heard {
		c.samples = 0 // nothing was said: tell the goroutine
	}
	close(c.chunks)
}

func (c *capture) transcribe(ctx context.Context) {
	o := c.p.s.o.STT
	p := c.p
	fail := func(why string, err error) {
		msg := why
		if err != nil {
			msg += ": " + err.Error()
		}
		p.s.log.Warn("voice command failed", "why", msg)
		p.out.Raise(worldmodel.Event{Time: p.s.clock.Now(), Kind: EventCommandFailed, Source: p.s.name, Priority: worldmodel.Low,
			Message: msg, Data: map[string]any{"wake_word": c.word}})
	}
	tctx, cancel := context.WithTimeout(ctx, o.MaxCommand+o.Timeout)
	defer cancel()
	tr, err := wyoming.StartTranscription(tctx, o.Wyoming, o.Model, o.Language)
	if err != nil {
		fail("speech-to-text server unreachable", err)
		return
	}
	var sent int
	for ch := range c.chunks {
		if err := tr.Write(ch); err != nil {
			tr.Abort()
			fail("speech-to-text server dropped the stream", err)
			return
		}
		sent += len(ch)
	}
	if ctx.Err() != nil {
		tr.Abort()
		return // shutting down
	}
	if c.samples == 0 {
		tr.Abort()
		fail("no speech after the wake word", nil)
		return
	}
	t0 := p.s.clock.Now()
	fctx, fcancel := context.WithTimeout(ctx, o.Timeout)
	defer fcancel()
	text, err := tr.Finish(fctx)
	if err != nil {
		fail("transcription failed", err)
		return
	}
	if strings.TrimSpace(text) == "" {
		fail("the transcript is empty", nil)
		return
	}
	sttMs := p.s.clock.Since(t0).Milliseconds()
	p.s.log.Info("voice command", "text", text, "audio_s", float64(sent)/audio.Rate, "stt_ms", sttMs)
	p.out.Raise(worldmodel.Event{Time: p.s.clock.Now(), Kind: EventVoiceCommand, Source: p.s.name, Priority: worldmodel.Normal,
		Message: fmt.Sprintf("voice command: %q", text),
		Data: map[string]any{"text": text, "wake_word": c.word, "audio_s": round3(float64(sent) / audio.Rate),
			"stt_ms": sttMs, "latency_ms": p.s.clock.Since(c.started).Milliseconds()}})
}

// remoteWake keeps a wake-word stream to a Wyoming server open, with
// backoff, and says whether it is up: while it is not, the built-in
// detector decides.
type remoteWake struct {
	addr    string
	names   []string
	backoff sensors.Backoff
	clock   clock.Clock // paces the retries
	log     *slog.Logger
	audio   chan []int16
	det     chan wyoming.Detection
	up      atomic.Bool
}

func newRemoteWake(addr string, names []string, b sensors.Backoff, clk clock.Clock, log *slog.Logger) *remoteWake {
	return &remoteWake{addr: addr, names: names, backoff: b, clock: clk, log: log,
		audio: make(chan []int16, 64), det: make(chan wyoming.Detection, 8)}
}

// send queues audio for the server without blocking the microphone: a
// chunk that finds the queue full is dropped.
func (r *remoteWake) send(s []int16) {
	select {
	case r.audio <- append([]int16(nil), s...):
	default:
	}
}

func (r *remoteWake) run(ctx context.Context) {
	attempt := 0
	for ctx.Err() == nil {
		err := r.session(ctx)
		if ctx.Err() != nil {
			return
		}
		if r.up.Swap(false) {
			r.log.Warn("Wyoming wake-word server lost; the built-in detector takes over", "server", r.addr, "err", err)
			attempt = 0
		} else if attempt == 0 {
			r.log.Warn("Wyoming wake-word server unreachable; using the built-in detector meanwhile", "server", r.addr, "err", err)
		}
		d := r.backoff.Delay(attempt)
		attempt++
		if clock.Sleep(ctx, r.clock, d) != nil {
			return
		}
	}
}

func (r *remoteWake) session(ctx context.Context) error {
	ws, err := wyoming.StartWake(ctx, r.addr, r.names)
	if err != nil {
		return err
	}
	defer ws.Close()
	// Drain audio queued while the server was down: it is stale.
	for len(r.audio) > 0 {
		<-r.audio
	}
	r.up.Store(true)
	r.log.Info("Wyoming wake-word server connected", "server", r.addr, "names", r.names)
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case s := <-r.audio:
			if err := ws.Write(s); err != nil {
				return err
			}
		case d, ok := <-ws.Detections():
			if !ok {
				return ws.Err()
			}
			select {
			case r.det <- d:
			default:
			}
		}
	}
}
