package vision

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
)

// The motion region: the camera's motion_start event carries the boxes
// that moved (in the coordinates of the analysed frame, whose size it
// gives) and the source of the frame at that moment. Describing the
// region rather than the whole frame gives a small model the detail that
// matters and fewer pixels to read.

// regionScale is how many thousandths of the frame a region is given in,
// so that it can be applied to a JPEG of another size.
const regionScale = 1000

// motionRegion returns the union of an event's boxes, widened by a margin
// of half its size on every side (context helps the model), in
// thousandths of the frame; nil when the data has no usable boxes or they
// cover most of the frame anyway.
func motionRegion(data map[string]any) *image.Rectangle {
	w, h := num(data["width"]), num(data["height"])
	if w <= 0 || h <= 0 {
		return nil
	}
	var u image.Rectangle
	for _, b := range boxes(data["boxes"]) {
		u = u.Union(image.Rect(b[0], b[1], b[2], b[3]))
	}
	if u.Empty() {
		return nil
	}
	u = u.Inset(-max(u.Dx(), u.Dy()) / 2).Intersect(image.Rect(0, 0, w, h))
	if u.Dx()*u.Dy() > w*h*6/10 {
		return nil
	}
	r := image.Rect(u.Min.X*regionScale/w, u.Min.Y*regionScale/h, u.Max.X*regionScale/w, u.Max.Y*regionScale/h)
	return &r
}

// boxes reads [][4]int as the camera records it, or its JSON form (a
// replayed stream).
func boxes(v any) [][4]int {
	switch b := v.(type) {
	case [][4]int:
		return b
	case []any:
		var out [][4]int
		for _, e := range b {
			a, ok := e.([]any)
			if !ok || len(a) != 4 {
				return nil
			}
			out = append(out, [4]int{int(num(a[0])), int(num(a[1])), int(num(a[2])), int(num(a[3]))})
		}
		return out
	}
	return nil
}

func num(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}

// crop cuts region (thousandths of the frame) out of a JPEG; it reports
// false and returns data as it is when the region is too small to show.
func crop(data []byte, region image.Rectangle) ([]byte, bool, error) {
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, false, fmt.Errorf("stored snapshot is not a JPEG: %w", err)
	}
	b := img.Bounds()
	r := image.Rect(b.Min.X+region.Min.X*b.Dx()/regionScale, b.Min.Y+region.Min.Y*b.Dy()/regionScale,
		b.Min.X+region.Max.X*b.Dx()/regionScale, b.Min.Y+region.Max.Y*b.Dy()/regionScale).Intersect(b)
	if r.Dx() < 8 || r.Dy() < 8 {
		return data, false, nil
	}
	sub, ok := img.(interface {
		SubImage(image.Rectangle) image.Image
	})
	if !ok {
		return data, false, nil
	}
	var out bytes.Buffer
	if err := jpeg.Encode(&out, sub.SubImage(r), &jpeg.Options{Quality: 85}); err != nil {
		return nil, false, err
	}
	return out.Bytes(), true, nil
}
