package camera

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// TestMain doubles as the helper program of the exec tests: run with
// CAMERA_TEST_HELPER set, the test binary writes raw I420 frames to stdout
// the way rpicam-vid does, then fails like a camera that went away.
func TestMain(m *testing.M) {
	if os.Getenv("CAMERA_TEST_HELPER") == "i420" {
		w, _ := strconv.Atoi(os.Getenv("CAMERA_TEST_W"))
		h, _ := strconv.Atoi(os.Getenv("CAMERA_TEST_H"))
		n, _ := strconv.Atoi(os.Getenv("CAMERA_TEST_FRAMES"))
		frame := make([]byte, i420Size(w, h))
		for i := range n {
			for p := range frame {
				frame[p] = byte(10*i + 1)
				if p >= w*h {
					frame[p] = 128
				}
			}
			os.Stdout.Write(frame)
		}
		fmt.Fprintln(os.Stderr, "helper: camera gone")
		os.Exit(3)
	}
	os.Exit(m.Run())
}

func sceneFrames(t testing.TB, w, h, n int) [][]byte {
	t.Helper()
	sc, err := camsim.New(camsim.Config{Width: w, Height: h, Seed: 4, Noise: 2,
		Objects: []camsim.Object{{W: w / 5, H: h / 3, Y: h / 3, Speed: 3, Level: 120}}})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, w*h)
		sc.Render(i*3, out[i])
	}
	return out
}

func encodeJPEG(t testing.TB, y []byte, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	img := &image.Gray{Pix: y, Stride: w, Rect: image.Rect(0, 0, w, h)}
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// mjpegClip writes frames [0, n) of a scene as an MJPEG file, as a camera
// filming it would have recorded them, and returns its path.
func mjpegClip(t testing.TB, name string, n int, sc camsim.Config) string {
	t.Helper()
	scene, err := camsim.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	var clip bytes.Buffer
	y := make([]byte, sc.Width*sc.Height)
	for i := range n {
		scene.Render(i, y)
		clip.Write(encodeJPEG(t, y, sc.Width, sc.Height))
	}
	return writeFile(t, name, clip.Bytes())
}

// segments lists a JPEG's marker segments up to SOS: (offset, marker, length incl. marker).
func withoutDHT(j []byte) []byte {
	out := append([]byte(nil), j[:2]...)
	i := 2
	for i+4 <= len(j) {
		mk := j[i+1]
		n := int(j[i+2])<<8 | int(j[i+3])
		if mk == 0xDA {
			return append(out, j[i:]...)
		}
		if mk != 0xC4 {
			out = append(out, j[i:i+2+n]...)
		}
		i += 2 + n
	}
	return out
}

func meanAbsDiff(a []byte, f *Frame) float64 {
	var s float64
	for y := 0; y < f.Height; y++ {
		for x := 0; x < f.Width; x++ {
			d := float64(a[y*f.Width+x]) - float64(f.Y[y*f.YStride+x])
			if d < 0 {
				d = -d
			}
			s += d
		}
	}
	return s / float64(f.Width*f.Height)
}

func writeFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// openFile opens a clip for the test; it is closed when the test ends.
func openFile(t testing.TB, path string, o FileOpts) Source {
	t.Helper()
	src, err := OpenFile(path, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func TestMJPEGStream(t *testing.T) {
	const w, h = 96, 64
	frames := sceneFrames(t, w, h, 4)
	var stream bytes.Buffer
	stream.Write(encodeJPEG(t, frames[0], w, h))
	stream.WriteString("\x00\x00garbage between frames\xff\x00")
	// An EXIF block whose embedded thumbnail has its own FF D8 … FF D9.
	j := encodeJPEG(t, frames[1], w, h)
	app1 := []byte("Exif\x00\x00\xff\xd8thumbnail\xff\xd9")
	stream.Write(j[:2])
	stream.Write([]byte{0xFF, 0xE1, byte((len(app1) + 2) >> 8), byte(len(app1) + 2)})
	stream.Write(app1)
	stream.Write(j[2:])
	// A UVC-style frame without Huffman tables.
	stripped := withoutDHT(encodeJPEG(t, frames[2], w, h))
	if bytes.Contains(stripped, []byte{0xFF, 0xC4}) {
		t.Fatal("test bug: DHT not removed")
	}
	stream.Write(stripped)
	// A last frame cut off mid-way, as when a recorder is killed.
	j = encodeJPEG(t, frames[3], w, h)
	stream.Write(j[:len(j)/2])

	src := openFile(t, writeFile(t, "clip.mjpeg", stream.Bytes()), FileOpts{})
	var f Frame
	for i := range 3 {
		if err := src.Next(context.Background(), &f); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if f.Width != w || f.Height != h || f.Seq != uint64(i) || f.JPEG == nil {
			t.Fatalf("frame %d: %dx%d seq %d jpeg %d bytes", i, f.Width, f.Height, f.Seq, len(f.JPEG))
		}
		if d := meanAbsDiff(frames[i], &f); d > 3 {
			t.Errorf("frame %d: luma differs from the original by %.1f on average", i, d)
		}
	}
	if err := src.Next(context.Background(), &f); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last whole frame: %v, want io.EOF", err)
	}
}

func TestCorruptFrameIsABadFrameNotTheEnd(t *testing.T) {
	const w, h = 64, 48
	frames := sceneFrames(t, w, h, 2)
	var stream bytes.Buffer
	stream.Write(encodeJPEG(t, frames[0], w, h))
	stream.Write([]byte{0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02, 1, 2, 3, 0xFF, 0xD9}) // SOS without a frame header
	stream.Write(encodeJPEG(t, frames[1], w, h))
	src := openFile(t, writeFile(t, "c.mjpeg", stream.Bytes()), FileOpts{})
	var f Frame
	if err := src.Next(context.Background(), &f); err != nil {
		t.Fatal(err)
	}
	if err := src.Next(context.Background(), &f); !errors.Is(err, ErrBadFrame) {
		t.Fatalf("corrupt frame: %v, want ErrBadFrame", err)
	}
	if err := src.Next(context.Background(), &f); err != nil || f.Seq != 2 {
		t.Fatalf("frame after the corrupt one: seq %d, %v", f.Seq, err)
	}
}

func y4m(w, h int, colour string, frames [][]byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C%s\n", w, h, colour)
	for _, fr := range frames {
		b.WriteString("FRAME\n")
		b.Write(fr)
	}
	return b.Bytes()
}

func TestY4M(t *testing.T) {
	const w, h = 6, 4
	mk := func(n, v int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(v + i)
		}
		return p
	}
	t.Run("420", func(t *testing.T) {
		var frames [][]byte
		for i := range 3 {
			frames = append(frames, append(mk(w*h, 10*i), mk(2*3*2, 200)...))
		}
		src := openFile(t, writeFile(t, "a.y4m", y4m(w, h, "420jpeg", frames)), FileOpts{})
		if fps := src.(*fileSource).FPS(); fps != 25 {
			t.Errorf("fps %g from the header, want 25", fps)
		}
		var f Frame
		for i := range 3 {
			if err := src.Next(context.Background(), &f); err != nil {
				t.Fatal(err)
			}
			if f.Width != w || f.Height != h || !bytes.Equal(f.Y, frames[i][:w*h]) || f.Cb == nil ||
				f.Ratio != image.YCbCrSubsampleRatio420 || !bytes.Equal(f.Cb, frames[i][w*h:w*h+6]) {
				t.Fatalf("frame %d: %+v", i, f)
			}
			if got, want := f.Time.Sub(src.(*fileSource).start), time.Duration(i)*40*time.Millisecond; got != want {
				t.Errorf("frame %d at %v, want %v", i, got, want)
			}
		}
		if err := src.Next(context.Background(), &f); !errors.Is(err, io.EOF) {
			t.Fatalf("want io.EOF, got %v", err)
		}
	})
	t.Run("mono", func(t *testing.T) {
		src := openFile(t, writeFile(t, "m.y4m", y4m(w, h, "mono", [][]byte{mk(w*h, 7)})), FileOpts{})
		var f Frame
		if err := src.Next(context.Background(), &f); err != nil || f.Cb != nil || f.Y[0] != 7 {
			t.Fatalf("%v %+v", err, f)
		}
		if _, ok := f.Image().(*image.Gray); !ok {
			t.Errorf("mono frame as %T, want *image.Gray", f.Image())
		}
	})
	t.Run("unsupported", func(t *testing.T) {
		_, err := OpenFile(writeFile(t, "x.y4m", y4m(w, h, "420p10", nil)), FileOpts{})
		if !errors.Is(err, ErrConfig) {
			t.Fatalf("10-bit clip: %v, want a configuration error", err)
		}
	})
}

func TestFileLoopAndPace(t *testing.T) {
	const w, h = 32, 16
	var frames [][]byte
	for i := range 3 {
		frames = append(frames, bytes.Repeat([]byte{byte(i)}, w*h*3/2))
	}
	path := writeFile(t, "l.y4m", y4m(w, h, "420", frames))

	t.Run("loop", func(t *testing.T) {
		src := openFile(t, path, FileOpts{Loop: true})
		var f Frame
		for i := range 8 {
			if err := src.Next(context.Background(), &f); err != nil {
				t.Fatal(err)
			}
			if f.Seq != uint64(i) || f.Y[0] != byte(i%3) {
				t.Fatalf("read %d: seq %d value %d", i, f.Seq, f.Y[0])
			}
		}
	})
	t.Run("paced", func(t *testing.T) {
		src := openFile(t, path, FileOpts{Loop: true, Pace: true, FPS: 50})
		var f Frame
		start := time.Now()
		for range 5 {
			if err := src.Next(context.Background(), &f); err != nil {
				t.Fatal(err)
			}
		}
		if el := time.Since(start); el < 80*time.Millisecond {
			t.Fatalf("5 frames at 50 fps took %v, want ≥ 80 ms", el)
		}
		// A consumer that falls behind gets the frame that is due, and the
		// frames it missed show as a gap: drops.
		time.Sleep(100 * time.Millisecond)
		before := f.Seq
		if err := src.Next(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
		if f.Seq < before+4 {
			t.Fatalf("after 100 ms away at 50 fps: seq %d → %d, want a gap of ≥ 4", before, f.Seq)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		src := openFile(t, path, FileOpts{Loop: true, Pace: true, FPS: 0.5})
		var f Frame
		_ = src.Next(context.Background(), &f) // frame 0 is due at once
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if err := src.Next(ctx, &f); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("waiting for a frame due in 2 s: %v, want the context's error", err)
		}
	})
}

func TestNotAClip(t *testing.T) {
	_, err := OpenFile(writeFile(t, "x.txt", []byte("hello")), FileOpts{})
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("%v, want a configuration error", err)
	}
}

func TestExecSource(t *testing.T) {
	t.Setenv("CAMERA_TEST_HELPER", "i420")
	t.Setenv("CAMERA_TEST_W", "32")
	t.Setenv("CAMERA_TEST_H", "16")
	t.Setenv("CAMERA_TEST_FRAMES", "3")
	o := DefaultOpts()
	o.Source, o.Width, o.Height = "exec", 32, 16
	o.Command = []string{os.Args[0], "-test.run=^$"}
	if err := o.validate(""); err != nil {
		t.Fatal(err)
	}
	src, err := openExec(context.Background(), o, clock.Real())
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	var f Frame
	for i := range 3 {
		if err := src.Next(context.Background(), &f); err != nil {
			t.Fatal(err)
		}
		if f.Width != 32 || f.Height != 16 || f.Y[0] != byte(10*i+1) || f.Y[511] != byte(10*i+1) ||
			len(f.Cb) != 128 || f.Cb[0] != 128 || f.Seq != uint64(i) {
			t.Fatalf("frame %d: %+v", i, f)
		}
	}
	err = src.Next(context.Background(), &f)
	if err == nil || !strings.Contains(err.Error(), "camera gone") || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("after the command died: %v, want its exit status and stderr", err)
	}
}

func TestSnapshotIsBounded(t *testing.T) {
	const w, h = 320, 240
	y := make([]byte, w*h)
	for i := range y {
		y[i] = byte(i * 7919 % 251) // noise: compresses badly
	}
	f := &Frame{Width: w, Height: h, Y: y, YStride: w}
	full, err := snapshotJPEG(f, 90, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	small, err := snapshotJPEG(f, 90, len(full)/3)
	if err != nil {
		t.Fatal(err)
	}
	if len(small) > len(full)/3 {
		t.Fatalf("%d bytes, limit %d", len(small), len(full)/3)
	}
	img, err := jpeg.Decode(bytes.NewReader(small))
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() >= w {
		t.Errorf("over budget but not downscaled: %v", img.Bounds())
	}
	// The device's own JPEG is kept as it is, copied.
	f.JPEG = full
	got, _ := snapshotJPEG(f, 90, 1<<20)
	if !bytes.Equal(got, full) || &got[0] == &full[0] {
		t.Error("device JPEG not kept as an independent copy")
	}
	if _, err := snapshotJPEG(f, 90, 100); err == nil {
		t.Error("a 100-byte budget was met?")
	}
}
