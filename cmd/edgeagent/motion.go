package main

import (
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/camera"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

func init() {
	var (
		boardPath, camName, annotate string
		asJSON, quiet                bool
		threshold, minArea           int
		masks                        []string
	)
	cmd := &cobra.Command{
		Use:   "motion FILE",
		Short: "Run a camera's motion detector over a recorded clip (MJPEG or Y4M) to tune it",
		Long: `Runs the motion detector over a recorded clip (raw MJPEG as USB webcams send it,
or YUV4MPEG2) as fast as possible, with a camera's settings from a board file
(--board, --camera) or the defaults, and prints for every frame whether there
was motion, the changed area in percent of the frame and the boxes
(x0,y0,x1,y1 in frame pixels), then a summary line. --annotate DIR writes
every frame as a JPEG with the boxes drawn (red: motion, yellow: calibrating).`,
		Example: `  edgeagent motion porch.mjpeg
  edgeagent motion porch.mjpeg --board board-configs/rpi4.yaml --camera front_cam --annotate /tmp/seen
  edgeagent motion porch.mjpeg --threshold 40 --mask 0,0,640,0,640,80,0,80 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, from, err := motionConfig(boardPath, camName)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("threshold") {
				cfg.Threshold = threshold
			}
			if cmd.Flags().Changed("min-area") {
				cfg.MinArea = minArea
			}
			cfg.Masks = append(cfg.Masks, masks...)
			if annotate != "" {
				if err := os.MkdirAll(annotate, 0o755); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if !asJSON {
				fmt.Fprintf(out, "# %s with %s: threshold %d, min_area %d, frame_height %d, %d mask(s), lighting compensation %v\n",
					args[0], from, cfg.Threshold, cfg.MinArea, cfg.FrameHeight, len(cfg.Masks), cfg.CompensateLighting)
			}
			enc := json.NewEncoder(out)
			st, err := camera.DetectClip(cmd.Context(), args[0], cfg, func(f *camera.Frame, r motion.Result) error {
				if !quiet {
					if err := printFrame(out, enc, asJSON, f, r); err != nil {
						return err
					}
				}
				if annotate != "" {
					return writeAnnotated(filepath.Join(annotate, fmt.Sprintf("frame-%06d.jpg", f.Seq)), f, r)
				}
				return nil
			})
			if err != nil {
				return err
			}
			return printSummary(out, enc, asJSON, st)
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", "", "board file whose camera settings to use (default: the detector's defaults)")
	cmd.Flags().StringVar(&camName, "camera", "", "camera sensor in the board file (default: its only camera)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object per frame, then a summary object")
	cmd.Flags().StringVar(&annotate, "annotate", "", "write each frame with its boxes drawn as DIR/frame-NNNNNN.jpg")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print the summary only")
	cmd.Flags().IntVar(&threshold, "threshold", 0, "override the threshold (luma difference, 1..255)")
	cmd.Flags().IntVar(&minArea, "min-area", 0, "override min_area (pixels at frame_height)")
	cmd.Flags().StringArrayVar(&masks, "mask", nil, "add a mask polygon x1,y1,x2,y2,... (repeatable)")
	rootCmd.AddCommand(cmd)
}

// motionConfig returns the detector settings of a board's camera, or the
// defaults, and says where they came from.
func motionConfig(boardPath, camName string) (motion.Config, string, error) {
	if boardPath == "" && camName == "" {
		return motion.DefaultConfig(), "default settings", nil
	}
	if boardPath == "" {
		boardPath = defaultBoard
	}
	cfg, err := board.Load(boardPath)
	if err != nil {
		return motion.Config{}, "", err
	}
	var cams []board.Sensor
	for _, s := range cfg.Sensors {
		if s.Kind == camera.Kind && (camName == "" || s.Name == camName) {
			cams = append(cams, s)
		}
	}
	if len(cams) != 1 {
		var names []string
		for _, s := range cfg.Sensors {
			if s.Kind == camera.Kind {
				names = append(names, s.Name)
			}
		}
		if camName != "" {
			return motion.Config{}, "", fmt.Errorf("%s: no camera %q (cameras: %s)", boardPath, camName, strings.Join(names, ", "))
		}
		return motion.Config{}, "", fmt.Errorf("%s: %d cameras (%s); choose one with --camera", boardPath, len(names), strings.Join(names, ", "))
	}
	s := cams[0]
	o, err := camera.DecodeOpts(sensors.Config{
		Name: s.Name, Kind: s.Kind, Platform: cfg.Device.Platform, Interval: s.Interval,
		Decode: s.Options.Decode, Dir: filepath.Dir(boardPath),
	})
	if err != nil {
		return motion.Config{}, "", fmt.Errorf("%s: camera %s: %w", boardPath, s.Name, err)
	}
	return o.Motion.Config, fmt.Sprintf("%s's %s settings", boardPath, s.Name), nil
}

type frameJSON struct {
	Frame       uint64   `json:"frame"`
	Motion      bool     `json:"motion"`
	Calibrating bool     `json:"calibrating,omitempty"`
	AreaPct     float64  `json:"area_pct"`
	Boxes       [][4]int `json:"boxes"`
}

func printFrame(out io.Writer, enc *json.Encoder, asJSON bool, f *camera.Frame, r motion.Result) error {
	boxes := make([][4]int, len(r.Boxes))
	for i, b := range r.Boxes {
		boxes[i] = [4]int{b.Min.X, b.Min.Y, b.Max.X, b.Max.Y}
	}
	if asJSON {
		return enc.Encode(frameJSON{Frame: f.Seq, Motion: r.Motion, Calibrating: r.Calibrating,
			AreaPct: motionRound(r.Area), Boxes: boxes})
	}
	state := "-"
	switch {
	case r.Motion:
		state = "motion"
	case r.Calibrating:
		state = "calibrating"
	}
	var b strings.Builder
	for _, x := range boxes {
		fmt.Fprintf(&b, " %d,%d,%d,%d", x[0], x[1], x[2], x[3])
	}
	_, err := fmt.Fprintf(out, "%6d  %-11s %6.2f%%%s\n", f.Seq, state, r.Area, b.String())
	return err
}

func printSummary(out io.Writer, enc *json.Encoder, asJSON bool, st camera.ClipStats) error {
	fps, detMS, pct := 0.0, 0.0, 0.0
	if st.Elapsed > 0 {
		fps = float64(st.Frames) / st.Elapsed.Seconds()
	}
	if st.Frames > 0 {
		detMS = st.Detect.Seconds() * 1000 / float64(st.Frames)
		pct = 100 * float64(st.Motion) / float64(st.Frames)
	}
	if asJSON {
		return enc.Encode(map[string]any{"summary": map[string]any{
			"frames": st.Frames, "motion_frames": st.Motion, "motion_pct": motionRound(pct),
			"calibrating_frames": st.Calibrating, "seconds": motionRound(st.Elapsed.Seconds()),
			"fps": motionRound(fps), "detect_ms_per_frame": detMS,
		}})
	}
	_, err := fmt.Fprintf(out, "frames %d, motion %d (%.1f%%), calibrating %d, %.2f s, %.0f fps (detector %.3f ms/frame)\n",
		st.Frames, st.Motion, pct, st.Calibrating, st.Elapsed.Seconds(), fps, detMS)
	return err
}

func writeAnnotated(path string, f *camera.Frame, r motion.Result) error {
	w, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := jpeg.Encode(w, camera.Annotate(f, r), &jpeg.Options{Quality: 85}); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

func motionRound(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
