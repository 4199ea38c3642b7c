package camera

import (
	"bytes"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"testing"
)

// vtestPath is ../shared/data/video/vtest.mjpeg from the project root.
var vtestPath = filepath.Join("..", "..", "..", "shared", "data", "video", "vtest.mjpeg")

// BenchmarkDecodeMJPEG is the cost of getting the luma plane out of a
// webcam's MJPEG frame (image/jpeg decodes everything; the detector then
// reads only Y), on the real clip and on a 640×480 4:2:0 frame.
func BenchmarkDecodeMJPEG(b *testing.B) {
	b.Run("vtest-480x360", func(b *testing.B) {
		data, err := os.ReadFile(vtestPath)
		if err != nil {
			b.Skipf("vtest.mjpeg not available: %v", err)
		}
		m := newMJPEGReader(bytes.NewReader(data))
		var frames [][]byte
		for {
			j, err := m.next(nil)
			if err != nil {
				break
			}
			frames = append(frames, bytes.Clone(j))
		}
		benchDecode(b, frames)
	})
	b.Run("640x480", func(b *testing.B) {
		y := sceneFrames(b, 640, 480, 1)[0]
		img := image.NewYCbCr(image.Rect(0, 0, 640, 480), image.YCbCrSubsampleRatio420)
		copy(img.Y, y)
		for i := range img.Cb {
			img.Cb[i], img.Cr[i] = 120, 135
		}
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80}); err != nil {
			b.Fatal(err)
		}
		benchDecode(b, [][]byte{buf.Bytes()})
	})
}

func benchDecode(b *testing.B, frames [][]byte) {
	var f Frame
	var n int64
	for _, j := range frames {
		n += int64(len(j))
	}
	b.SetBytes(n / int64(len(frames)))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if err := decodeJPEG(frames[i%len(frames)], &f); err != nil {
			b.Fatal(err)
		}
	}
}
