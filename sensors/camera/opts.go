package camera

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

// Opts is the `options:` block of a camera sensor. Zero values are
// replaced by the defaults of DefaultOpts before the block is decoded, so
// a block only names what it changes.
type Opts struct {
	// Source is the backend: sim | v4l2 | gocv | file | exec.
	Source string `yaml:"source"`
	// Device is the V4L2 device (v4l2, default /dev/video0), or for gocv
	// a device index ("0") or path.
	Device string `yaml:"device,omitempty"`
	// Pipeline is a GStreamer pipeline ending in appsink (gocv).
	Pipeline string `yaml:"pipeline,omitempty"`
	// Path is the clip to replay (file; also gocv for a video file).
	// Relative paths are relative to the board file.
	Path string `yaml:"path,omitempty"`
	// Loop replays the clip forever (file).
	Loop bool `yaml:"loop"`
	// Pace delivers clip and simulator frames at FPS in real time, as a
	// camera would; off, as fast as they can be produced.
	Pace bool `yaml:"pace"`
	// Command runs a program that writes raw YUV420 (I420) frames of
	// Width×Height to its stdout (exec), e.g.
	// [rpicam-vid, -t, "0", --codec, yuv420, --width, "640", --height, "480", -o, "-"].
	Command []string `yaml:"command,omitempty"`
	// Width, Height and FPS are requested from devices (the nearest the
	// device offers is used), required by exec, and used by sim.
	Width  int     `yaml:"width"`
	Height int     `yaml:"height"`
	FPS    float64 `yaml:"fps"`
	// Format is the V4L2 pixel format: auto | mjpeg | yuyv | grey. auto
	// takes YUYV (luma without decoding) when the device can send the
	// requested size at the requested rate that way, else MJPEG (USB 2
	// bandwidth limits raw formats at larger sizes).
	Format string `yaml:"format"`
	// Buffers is the number of V4L2 capture buffers: few keep latency low.
	Buffers int `yaml:"buffers"`

	// SnapshotInterval is how often the latest frame is stored as a JPEG
	// in the world model (<name>.snapshot); 0 disables it. The frame at
	// each motion start is stored too (<name>.motion_snapshot).
	SnapshotInterval time.Duration `yaml:"snapshot_interval"`
	// SnapshotMaxBytes bounds one snapshot: larger ones are re-encoded at
	// half the size until they fit.
	SnapshotMaxBytes int `yaml:"snapshot_max_bytes"`
	// SnapshotQuality is the JPEG quality (1..100) when a snapshot has to
	// be encoded (the device's own JPEG is kept as it is).
	SnapshotQuality int `yaml:"snapshot_quality"`
	// LiveFPS is the rate of <name>.live, the frames a viewer (the
	// dashboard) watches: each is a JPEG at LiveQuality, encoded only while
	// someone watches, so a closed page costs nothing. 0 disables it.
	LiveFPS     float64 `yaml:"live_fps"`
	LiveQuality int     `yaml:"live_quality"`

	Motion MotionOpts `yaml:"motion"`
	Sim    SimOpts    `yaml:"sim"`

	// Reconnect is the backoff between attempts to reopen a source that
	// failed (a USB camera unplugged, a crashed command).
	Reconnect sensors.Backoff `yaml:"reconnect"`
}

// MotionOpts configures the motion detector and the events it raises.
type MotionOpts struct {
	Enabled       bool `yaml:"enabled"`
	motion.Config `yaml:",inline"`
	// OffDelay keeps motion on after the last frame with motion, so that a
	// person pausing for a second is one event, not two.
	OffDelay time.Duration `yaml:"off_delay"`
	// UpdateInterval is how often, while motion is on, a motion_update
	// (boxes, area) is recorded.
	UpdateInterval time.Duration `yaml:"update_interval"`
}

// SimOpts shapes the simulated scene (source: sim).
type SimOpts struct {
	Seed    uint64  `yaml:"seed"`
	Objects int     `yaml:"objects"` // things that walk through, one after another
	Noise   float64 `yaml:"noise"`   // sensor noise, ± luma levels
	Drift   float64 `yaml:"drift"`   // lighting swing, fraction (0.1 = ±10 %)
	// DriftPeriod is the period of the lighting swing.
	DriftPeriod time.Duration `yaml:"drift_period"`
	// Every is how often an object enters (each takes a few seconds to
	// cross).
	Every time.Duration `yaml:"every"`
}

// DefaultOpts returns the options a block starts from.
func DefaultOpts() Opts {
	mc := motion.DefaultConfig()
	return Opts{
		Source:           "sim",
		Pace:             true,
		Width:            640,
		Height:           480,
		FPS:              10,
		Format:           "auto",
		Buffers:          4,
		SnapshotInterval: 5 * time.Second,
		SnapshotMaxBytes: 256 << 10,
		SnapshotQuality:  75,
		LiveFPS:          10,
		LiveQuality:      60,
		Motion: MotionOpts{
			Enabled:        true,
			Config:         mc,
			OffDelay:       5 * time.Second,
			UpdateInterval: time.Second,
		},
		Sim: SimOpts{
			Seed: 1, Objects: 2, Noise: 4, Drift: 0.08,
			DriftPeriod: 60 * time.Second, Every: 40 * time.Second,
		},
		Reconnect: sensors.Backoff{Initial: 500 * time.Millisecond, Max: 10 * time.Second},
	}
}

// Validate checks the options of sensor name.
func (o *Opts) validate(dir string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch o.Source {
	case "sim", "v4l2", "gocv", "file", "exec":
	default:
		bad("options.source: want sim, v4l2, gocv, file or exec")
	}
	if o.Width < 16 || o.Width > 8192 {
		bad("options.width: want 16..8192")
	}
	if o.Height < 16 || o.Height > 8192 {
		bad("options.height: want 16..8192")
	}
	if !(o.FPS > 0 && o.FPS <= 240) {
		bad("options.fps: want 0 < fps ≤ 240")
	}
	switch o.Format {
	case "auto", "mjpeg", "yuyv", "grey":
	default:
		bad("options.format: want auto, mjpeg, yuyv or grey")
	}
	if o.Buffers < 2 || o.Buffers > 32 {
		bad("options.buffers: want 2..32")
	}
	switch o.Source {
	case "v4l2":
		if o.Device == "" {
			o.Device = "/dev/video0"
		}
	case "file":
		if o.Path == "" {
			bad("options.path: source file needs one")
		} else if p, err := (sensors.Config{Dir: dir}).File(o.Path); err != nil {
			bad("options.path: %v", err)
		} else {
			o.Path = p
		}
	case "exec":
		if len(o.Command) == 0 || o.Command[0] == "" {
			bad("options.command: source exec needs one")
		}
		if o.Width%2 != 0 || o.Height%2 != 0 {
			bad("options.width: source exec reads YUV420, which needs an even width and height")
		}
	case "gocv":
		n := 0
		for _, s := range []string{o.Device, o.Pipeline, o.Path} {
			if s != "" {
				n++
			}
		}
		if n != 1 {
			bad("options.source: gocv needs exactly one of device, pipeline and path")
		}
		if o.Path != "" && !filepath.IsAbs(o.Path) && dir != "" {
			o.Path = filepath.Join(dir, o.Path)
		}
		if o.Device != "" {
			if _, err := strconv.Atoi(o.Device); err != nil && !filepath.IsAbs(o.Device) {
				bad("options.device: want an index (0) or an absolute path")
			}
		}
	}
	if o.SnapshotInterval < 0 {
		bad("options.snapshot_interval: want ≥ 0")
	}
	if o.SnapshotMaxBytes < 4<<10 {
		bad("options.snapshot_max_bytes: want ≥ 4096")
	}
	if o.SnapshotQuality < 1 || o.SnapshotQuality > 100 {
		bad("options.snapshot_quality: want 1..100")
	}
	if !(o.LiveFPS >= 0 && o.LiveFPS <= 60) {
		bad("options.live_fps: want 0..60")
	}
	if o.LiveQuality < 1 || o.LiveQuality > 100 {
		bad("options.live_quality: want 1..100")
	}
	if o.Motion.Enabled {
		errs = append(errs, sensors.Under("options.motion.", o.Motion.Config.Validate())...)
		if o.Motion.OffDelay < 0 {
			bad("options.motion.off_delay: want ≥ 0")
		}
		if o.Motion.UpdateInterval <= 0 {
			bad("options.motion.update_interval: want > 0")
		}
	}
	if o.Source == "sim" {
		s := o.Sim
		if s.Objects < 0 || s.Objects > 16 || s.Noise < 0 || s.Noise > 64 || s.Drift < 0 || s.Drift > 0.9 ||
			s.DriftPeriod < 0 || s.Every <= 0 {
			bad("options.sim: want objects 0..16, noise 0..64, drift 0..0.9, drift_period ≥ 0, every > 0")
		}
	}
	return errors.Join(errs...)
}
