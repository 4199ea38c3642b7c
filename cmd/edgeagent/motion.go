//go:build !robot

package main

import (
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/camera"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

func init() {
	var (
		boardPath, camName, annotate string
		truthPath                    string
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
(x0,y0,x1,y1 in frame pixels) and the share of the frame inside a box, then a
summary line. --annotate DIR writes every frame as a JPEG with the boxes drawn
(red: motion, yellow: calibrating).

--truth FILE scores the boxes against ground truth, a JSON array of
{"frame": N, "boxes": [[x0,y0,x1,y1], ...]} (frames counted from 0; frames
the file does not list are not scored): a detected box and a true one match
one to one when their intersection over union is at least 0.3, and the
summary gives the precision (matched / detected) and recall (matched / true)
over the scored frames, calibrating frames included (a blind detector misses).`,
		Example: `  edgeagent motion porch.mjpeg
  edgeagent motion porch.mjpeg --board board-configs/rpi4.yaml --camera front_cam --annotate /tmp/seen
  edgeagent motion porch.mjpeg --threshold 40 --mask 0,0,640,0,640,80,0,80 --json
  edgeagent motion labelled.y4m --truth labelled.json -q`,
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
			var truth map[int][]image.Rectangle
			if truthPath != "" {
				if truth, err = readTruth(truthPath); err != nil {
					return err
				}
			}
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
			var q boxQuality
			st, err := camera.DetectClip(cmd.Context(), clock.Real(), args[0], cfg, func(f *camera.Frame, r motion.Result) error {
				fs := q.add(f, r, truth)
				if !quiet {
					if err := printFrame(out, enc, asJSON, f, r, fs); err != nil {
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
			if truth != nil && q.scored == 0 {
				return fmt.Errorf("%s: none of its frames is in %s (%d frames)", truthPath, args[0], st.Frames)
			}
			return printSummary(out, enc, asJSON, st, q, truth != nil)
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
	cmd.Flags().StringVar(&truthPath, "truth", "", "score the boxes against ground-truth boxes from this JSON file (see above)")
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

// minIoU is the overlap at which a detected box matches a true one.
const minIoU = 0.3

func readTruth(path string) (map[int][]image.Rectangle, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := motion.ReadTruth(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// boxQuality sums up the boxes over a clip: how much of the frame they
// cover and, against ground truth, how well they match it.
type boxQuality struct {
	frames   int
	boxedSum float64 // percent of the frame inside a box, summed over frames
	scored   int
	score    motion.Score
}

// frameScore is one frame's box quality.
type frameScore struct {
	boxedPct float64
	truth    *motion.Score // nil: the frame has no ground truth
}

func (q *boxQuality) add(f *camera.Frame, r motion.Result, truth map[int][]image.Rectangle) frameScore {
	fs := frameScore{boxedPct: 100 * float64(motion.UnionArea(r.Boxes)) / float64(f.Width*f.Height)}
	q.frames++
	q.boxedSum += fs.boxedPct
	if t, ok := truth[int(f.Seq)]; ok {
		fs.truth = new(motion.Score)
		fs.truth.Add(r.Boxes, t, minIoU)
		q.score.Merge(*fs.truth)
		q.scored++
	}
	return fs
}

type frameJSON struct {
	Frame       uint64     `json:"frame"`
	Motion      bool       `json:"motion"`
	Calibrating bool       `json:"calibrating,omitempty"`
	AreaPct     float64    `json:"area_pct"`
	BoxedPct    float64    `json:"boxed_pct"`
	Boxes       [][4]int   `json:"boxes"`
	Truth       *scoreJSON `json:"truth,omitempty"`
}

type scoreJSON struct {
	TP int `json:"tp"`
	FP int `json:"fp"`
	FN int `json:"fn"`
}

func printFrame(out io.Writer, enc *json.Encoder, asJSON bool, f *camera.Frame, r motion.Result, fs frameScore) error {
	boxes := make([][4]int, len(r.Boxes))
	for i, b := range r.Boxes {
		boxes[i] = [4]int{b.Min.X, b.Min.Y, b.Max.X, b.Max.Y}
	}
	if asJSON {
		fj := frameJSON{Frame: f.Seq, Motion: r.Motion, Calibrating: r.Calibrating,
			AreaPct: motionRound(r.Area), BoxedPct: motionRound(fs.boxedPct), Boxes: boxes}
		if fs.truth != nil {
			fj.Truth = &scoreJSON{TP: fs.truth.TP, FP: fs.truth.FP, FN: fs.truth.FN}
		}
		return enc.Encode(fj)
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
	if fs.truth != nil {
		fmt.Fprintf(&b, "  (truth: %d matched, %d false, %d missed)", fs.truth.TP, fs.truth.FP, fs.truth.FN)
	}
	_, err := fmt.Fprintf(out, "%6d  %-11s %6.2f%% boxed %6.2f%%%s\n", f.Seq, state, r.Area, fs.boxedPct, b.String())
	return err
}

func printSummary(out io.Writer, enc *json.Encoder, asJSON bool, st camera.ClipStats, q boxQuality, scored bool) error {
	fps, detMS, pct, boxed := 0.0, 0.0, 0.0, 0.0
	if st.Elapsed > 0 {
		fps = float64(st.Frames) / st.Elapsed.Seconds()
	}
	if st.Frames > 0 {
		detMS = st.Detect.Seconds() * 1000 / float64(st.Frames)
		pct = 100 * float64(st.Motion) / float64(st.Frames)
	}
	if q.frames > 0 {
		boxed = q.boxedSum / float64(q.frames)
	}
	if asJSON {
		sum := map[string]any{
			"frames": st.Frames, "motion_frames": st.Motion, "motion_pct": motionRound(pct),
			"calibrating_frames": st.Calibrating, "seconds": motionRound(st.Elapsed.Seconds()),
			"fps": motionRound(fps), "detect_ms_per_frame": detMS, "boxed_pct_mean": motionRound(boxed),
		}
		if scored {
			sum["truth"] = map[string]any{
				"frames": q.scored, "min_iou": minIoU, "tp": q.score.TP, "fp": q.score.FP, "fn": q.score.FN,
				"precision": q.score.Precision(), "recall": q.score.Recall(),
			}
		}
		return enc.Encode(map[string]any{"summary": sum})
	}
	if _, err := fmt.Fprintf(out, "frames %d, motion %d (%.1f%%), calibrating %d, boxed %.2f%% of the frame on average, %.2f s, %.0f fps (detector %.3f ms/frame)\n",
		st.Frames, st.Motion, pct, st.Calibrating, boxed, st.Elapsed.Seconds(), fps, detMS); err != nil {
		return err
	}
	if !scored {
		return nil
	}
	_, err := fmt.Fprintf(out, "boxes against the truth over %d frames (IoU ≥ %.1f): precision %.3f, recall %.3f (%d matched, %d false, %d missed)\n",
		q.scored, minIoU, q.score.Precision(), q.score.Recall(), q.score.TP, q.score.FP, q.score.FN)
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
