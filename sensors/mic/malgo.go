//go:build cgo

package mic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gen2brain/malgo"

	"github.com/edgeagent/edgeagent/clock"
)

/*
#include <stdlib.h>
*/
import "C"

// MalgoSource captures from a sound card through miniaudio (ALSA,
// PulseAudio, JACK, … whatever the system has).
type MalgoSource struct {
	Device   string   // ID (hex) or name; empty: the default device
	Backends []string // empty: miniaudio's order
	Buffer   time.Duration
	Clock    clock.Clock // stamps each period as the device hands it over (nil: the wall clock)
}

func newMalgoSource(o Opts, clk clock.Clock) (Source, error) {
	if _, err := parseBackends(o.Backends); err != nil {
		return nil, err
	}
	return &MalgoSource{Device: o.Device, Backends: o.Backends, Buffer: o.Buffer, Clock: clk}, nil
}

func (s *MalgoSource) String() string {
	d := s.Device
	if d == "" {
		d = "default device"
	}
	return "malgo " + d
}

var backendNames = map[string]malgo.Backend{
	"wasapi": malgo.BackendWasapi, "dsound": malgo.BackendDsound, "winmm": malgo.BackendWinmm,
	"coreaudio": malgo.BackendCoreaudio, "sndio": malgo.BackendSndio, "audio4": malgo.BackendAudio4,
	"oss": malgo.BackendOss, "pulseaudio": malgo.BackendPulseaudio, "alsa": malgo.BackendAlsa,
	"jack": malgo.BackendJack, "aaudio": malgo.BackendAaudio, "opensl": malgo.BackendOpensl,
	"webaudio": malgo.BackendWebaudio, "null": backendNull,
}

// backendNull is miniaudio's ma_backend_null. malgo v0.11.24's BackendNull
// (13) predates ma_backend_custom, which miniaudio inserted before null, so
// it names the custom backend and initialising with it fails ("No
// backend"). The null backend is the one after custom.
const backendNull = malgo.Backend(malgo.BackendWebaudio + 2)

func parseBackends(names []string) ([]malgo.Backend, error) {
	var out []malgo.Backend
	for _, n := range names {
		b, ok := backendNames[strings.ToLower(n)]
		if !ok {
			return nil, fmt.Errorf("unknown audio backend %q", n)
		}
		out = append(out, b)
	}
	return out, nil
}

// CaptureDevice is one capture device as miniaudio lists it.
type CaptureDevice struct {
	ID, Name  string
	IsDefault bool
	Formats   string // native formats, for diagnosis
}

// ListCaptureDevices lists the capture devices of the given backends.
func ListCaptureDevices(backends []string) ([]CaptureDevice, error) {
	bs, err := parseBackends(backends)
	if err != nil {
		return nil, err
	}
	mctx, err := malgo.InitContext(bs, malgo.ContextConfig{}, nil)
	if err != nil {
		return nil, fmt.Errorf("malgo: %w", err)
	}
	defer func() { mctx.Uninit(); mctx.Free() }()
	infos, err := mctx.Devices(malgo.Capture)
	if err != nil {
		return nil, fmt.Errorf("malgo: listing capture devices: %w", err)
	}
	out := make([]CaptureDevice, len(infos))
	for i, d := range infos {
		var fs []string
		for _, f := range d.Formats {
			fs = append(fs, fmt.Sprintf("%d Hz × %d ch", f.SampleRate, f.Channels))
		}
		out[i] = CaptureDevice{ID: d.ID.String(), Name: d.Name(), IsDefault: d.IsDefault != 0, Formats: strings.Join(fs, ", ")}
	}
	return out, nil
}

// pickDevice finds the configured device: by ID, else exact name, else a
// unique name substring. Never by position.
func pickDevice(infos []malgo.DeviceInfo, want string) (*malgo.DeviceInfo, error) {
	var sub []int
	for i := range infos {
		if infos[i].ID.String() == want || infos[i].Name() == want {
			return &infos[i], nil
		}
		if strings.Contains(strings.ToLower(infos[i].Name()), strings.ToLower(want)) {
			sub = append(sub, i)
		}
	}
	var names []string
	for i := range infos {
		names = append(names, fmt.Sprintf("%q (id %s)", infos[i].Name(), infos[i].ID.String()))
	}
	switch len(sub) {
	case 1:
		return &infos[sub[0]], nil
	case 0:
		return nil, fmt.Errorf("no capture device %q; devices: %s", want, strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("capture device %q is ambiguous; devices: %s", want, strings.Join(names, ", "))
}

// chunkFrames is the size of the buffers between the audio thread and Read.
const chunkFrames = 320 // 20 ms

// Open initialises a context and starts the capture device.
func (s *MalgoSource) Open(ctx context.Context) (Stream, error) {
	bs, err := parseBackends(s.Backends)
	if err != nil {
		return nil, err
	}
	mctx, err := malgo.InitContext(bs, malgo.ContextConfig{}, nil)
	if err != nil {
		return nil, fmt.Errorf("malgo: %w", err)
	}
	st := &malgoStream{mctx: mctx, stopped: make(chan struct{}), clock: clock.Or(s.Clock)}
	n := max(4, int(s.Buffer.Seconds()*16000)/chunkFrames)
	st.free = make(chan []int16, n)
	st.full = make(chan captured, n)
	for range n {
		st.free <- make([]int16, 0, chunkFrames)
	}

	cfg := malgo.DefaultDeviceConfig(malgo.Capture)
	// Ask for what the pipeline wants; miniaudio converts format, channels
	// and rate from whatever the hardware does.
	cfg.Capture.Format = malgo.FormatS16
	cfg.Capture.Channels = 1
	cfg.SampleRate = 16000
	cfg.PeriodSizeInMilliseconds = 20
	// Many USB and I2S capture drivers on Pi kernels misbehave with mmap
	// access (silence or EIO); plain read/write always works.
	cfg.Alsa.NoMMap = 1
	var idPtr unsafe.Pointer
	if s.Device != "" {
		infos, err := mctx.Devices(malgo.Capture)
		if err != nil {
			st.freeContext()
			return nil, fmt.Errorf("malgo: listing capture devices: %w", err)
		}
		d, err := pickDevice(infos, s.Device)
		if err != nil {
			st.freeContext()
			return nil, err
		}
		// The ID must live in C memory: the device config is handed to C.
		// It is freed with the context, in case a backend keeps it.
		idPtr = d.ID.Pointer()
		st.idPtr = idPtr
		cfg.Capture.DeviceID = idPtr
	}
	dev, err := malgo.InitDevice(mctx.Context, cfg, malgo.DeviceCallbacks{Data: st.onData, Stop: st.onStop})
	if err != nil {
		st.freeContext()
		return nil, fmt.Errorf("malgo: opening capture device: %w", err)
	}
	st.dev = dev
	if err := dev.Start(); err != nil {
		st.Close()
		return nil, fmt.Errorf("malgo: starting capture: %w", err)
	}
	st.running.Store(true)
	return st, nil
}

type malgoStream struct {
	mctx    *malgo.AllocatedContext
	idPtr   unsafe.Pointer
	dev     *malgo.Device
	clock   clock.Clock
	free    chan []int16  // empty buffers for the audio thread
	full    chan captured // captured buffers for Read
	cur     captured      // buffer being drained by Read
	curPos  int
	dropped atomic.Uint64
	running atomic.Bool
	closing atomic.Bool
	stopped chan struct{} // closed when the device stops (unplugged, or Close)
	stopMu  sync.Once
	close   sync.Once
}

// captured is a buffer of audio and when its last sample was captured.
type captured struct {
	b   []int16
	end time.Time
}

// onData runs on miniaudio's audio thread. It copies out of C memory and
// never blocks: with no free buffer (the pipeline fell behind) the audio
// is dropped and counted, which is better than stalling the device. The
// period's last sample was captured now, the ones before it at the rate.
func (s *malgoStream) onData(_, in []byte, frames uint32) {
	now := s.clock.Now()
	for off := 0; off < int(frames); off += chunkFrames {
		n := min(chunkFrames, int(frames)-off)
		var b []int16
		select {
		case b = <-s.free:
		default:
			s.dropped.Add(uint64(n))
			continue
		}
		b = b[:n]
		for i := range b {
			j := 2 * (off + i)
			b[i] = int16(uint16(in[j]) | uint16(in[j+1])<<8)
		}
		s.full <- captured{b: b, end: now.Add(-samplesDur(int(frames) - off - n))} // never blocks: full has room for every buffer
	}
}

// onStop runs when the device stops, asked or not.
func (s *malgoStream) onStop() {
	s.stopMu.Do(func() { close(s.stopped) })
}

var errDeviceStopped = errors.New("malgo: capture device stopped (unplugged?)")

func (s *malgoStream) Read(p []int16) (int, time.Time, error) {
	if s.cur.b == nil || s.curPos == len(s.cur.b) {
		if s.cur.b != nil {
			s.free <- s.cur.b[:0]
			s.cur.b = nil
		}
		select {
		case c := <-s.full:
			s.cur, s.curPos = c, 0
		case <-s.stopped:
			// Drain what was captured before the stop.
			select {
			case c := <-s.full:
				s.cur, s.curPos = c, 0
			default:
				if s.closing.Load() {
					return 0, time.Time{}, errClosed
				}
				return 0, time.Time{}, errDeviceStopped
			}
		}
	}
	n := copy(p, s.cur.b[s.curPos:])
	s.curPos += n
	return n, s.cur.end.Add(-samplesDur(len(s.cur.b) - s.curPos)), nil
}

func (s *malgoStream) Dropped() uint64 { return s.dropped.Load() }

func (s *malgoStream) Close() error {
	s.close.Do(func() {
		s.closing.Store(true)
		if s.dev != nil {
			s.dev.Uninit() // stops the device; the stop callback fires
			s.dev = nil
		}
		s.onStop()
		s.freeContext()
	})
	return nil
}

func (s *malgoStream) freeContext() {
	if s.mctx != nil {
		s.mctx.Uninit()
		s.mctx.Free()
		s.mctx = nil
	}
	if s.idPtr != nil {
		C.free(s.idPtr)
		s.idPtr = nil
	}
}

// malgoAvailable reports whether this binary has the malgo backend.
const malgoAvailable = true
