//go:build gocv

package camera

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/edgeagent/edgeagent/clock"
)

// openGoCVOrSkip opens the gocv source of o, closed when the test ends; a
// build of OpenCV that cannot open it skips the test, saying why.
func openGoCVOrSkip(t *testing.T, o Opts, why string) Source {
	t.Helper()
	if err := o.validate(""); err != nil {
		t.Fatal(err)
	}
	src, err := openGoCV(context.Background(), o, clock.Real())
	if err != nil {
		t.Skipf("%s: %v", why, err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func TestGoCVFile(t *testing.T) {
	const w, h = 96, 64
	var clip bytes.Buffer
	frames := sceneFrames(t, w, h, 5)
	for _, y := range frames {
		clip.Write(encodeJPEG(t, y, w, h))
	}
	o := DefaultOpts()
	o.Source, o.Path = "gocv", writeFile(t, "c.mjpeg", clip.Bytes())
	src := openGoCVOrSkip(t, o, "OpenCV cannot read raw MJPEG here")
	var f Frame
	n := 0
	for {
		err := src.Next(context.Background(), &f)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if f.Width != w || f.Height != h || f.Cb == nil {
			t.Fatalf("frame %d: %dx%d chroma %v", n, f.Width, f.Height, f.Cb != nil)
		}
		// Another JPEG decoder (FFmpeg's) and a BGR round trip: close, not
		// identical, on this fine-grained texture.
		if d := meanAbsDiff(frames[n], &f); d > 6 {
			t.Fatalf("frame %d: luma off by %.1f", n, d)
		}
		n++
	}
	if n != len(frames) {
		t.Fatalf("%d frames, want %d", n, len(frames))
	}
}

func TestGoCVPipeline(t *testing.T) {
	o := DefaultOpts()
	o.Source = "gocv"
	o.Pipeline = "videotestsrc num-buffers=3 pattern=ball ! video/x-raw,width=160,height=120 ! videoconvert ! video/x-raw,format=GRAY8 ! appsink"
	src := openGoCVOrSkip(t, o, "no GStreamer with videotestsrc here")
	var f Frame
	if err := src.Next(context.Background(), &f); err != nil {
		t.Fatal(err)
	}
	if f.Width != 160 || f.Height != 120 || f.Cb != nil {
		t.Fatalf("GRAY8 appsink: %dx%d chroma %v", f.Width, f.Height, f.Cb != nil)
	}
}
