package motion

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
)

// TruthFrame is one frame's ground truth, as `edgeagent motion --truth`
// reads it: the boxes of everything that moves, [x0, y0, x1, y1] in frame
// pixels with x1 and y1 exclusive. A truth file is a JSON array of them.
type TruthFrame struct {
	Frame int      `json:"frame"`
	Boxes [][4]int `json:"boxes"`
}

// ReadTruth reads a truth file: frame number → boxes. Frames the file does
// not list are not scored; a listed frame with no boxes says nothing moves.
func ReadTruth(r io.Reader) (map[int][]image.Rectangle, error) {
	var frames []TruthFrame
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&frames); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, fmt.Errorf("truth: not JSON (syntax error at byte %d); want [{\"frame\": N, \"boxes\": [[x0,y0,x1,y1], ...]}, ...]", se.Offset)
		case errors.As(err, &te):
			return nil, fmt.Errorf("truth: %s is a JSON %s, want %s; want [{\"frame\": N, \"boxes\": [[x0,y0,x1,y1], ...]}, ...]", te.Field, te.Value, te.Type)
		}
		return nil, fmt.Errorf("truth: %w; want [{\"frame\": N, \"boxes\": [[x0,y0,x1,y1], ...]}, ...]", err)
	}
	out := make(map[int][]image.Rectangle, len(frames))
	for i, f := range frames {
		if f.Frame < 0 {
			return nil, fmt.Errorf("truth: entry %d: frame %d is negative", i, f.Frame)
		}
		if _, dup := out[f.Frame]; dup {
			return nil, fmt.Errorf("truth: entry %d: frame %d is listed twice", i, f.Frame)
		}
		boxes := make([]image.Rectangle, len(f.Boxes))
		for j, b := range f.Boxes {
			if b[2] <= b[0] || b[3] <= b[1] {
				return nil, fmt.Errorf("truth: frame %d: box %d %v is empty (want x0 < x1 and y0 < y1)", f.Frame, j, b)
			}
			boxes[j] = image.Rect(b[0], b[1], b[2], b[3])
		}
		out[f.Frame] = boxes
	}
	return out, nil
}
