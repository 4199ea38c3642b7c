package record

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// simSecond is one second of the sim board's stream as the recorder sees
// it: about 100 readings (microphone levels at 10 Hz, IMU at 5 Hz …) and
// one 640×480 camera snapshot, textured and noisy like the simulated
// camera's.
func simSecond(b *testing.B) []worldmodel.Item {
	img := image.NewYCbCr(image.Rect(0, 0, 640, 480), image.YCbCrSubsampleRatio420)
	rng := rand.New(rand.NewPCG(1, 2))
	for y := range 480 {
		for x := range 640 {
			img.Y[y*img.YStride+x] = uint8((x/16+y/16)%2*90 + 60 + rng.IntN(9))
		}
	}
	for i := range img.Cb {
		img.Cb[i], img.Cr[i] = 128, 128
	}
	var jb bytes.Buffer
	if err := jpeg.Encode(&jb, img, &jpeg.Options{Quality: 75}); err != nil {
		b.Fatal(err)
	}
	var items []worldmodel.Item
	seq := uint64(0)
	add := func(o worldmodel.Observation) {
		seq++
		o.Seq = seq
		items = append(items, worldmodel.Item{Kind: worldmodel.ItemObservation, Obs: o})
	}
	for i := range 100 {
		add(worldmodel.Observation{Time: t0.Add(time.Duration(i) * 10 * time.Millisecond), Source: "sensor" + string(rune('a'+i%26)) + ".level",
			Kind: worldmodel.Reading, Value: float64(i) / 7, Unit: "dBFS"})
	}
	add(worldmodel.Observation{Time: t0, Source: "front_cam.snapshot", Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: jb.Bytes()}})
	return items
}

// BenchmarkRecordSimSecond is the recorder's work for one second of the
// sim board: encode (the frame re-encoded at 320 px) and write. ns/op over
// 1e9 is the fraction of one core; budget 3 %.
func BenchmarkRecordSimSecond(b *testing.B) {
	items := simSecond(b)
	o := DefaultOptions()
	fl, err := createFile(filepath.Join(b.TempDir(), "b.mcap"), o, testHeader(), t0)
	if err != nil {
		b.Fatal(err)
	}
	defer fl.abandon()
	enc := newEncoder(o.Frames)
	var msgs []Message
	second := 0
	b.ReportAllocs()
	for b.Loop() {
		shift := time.Duration(second) * time.Second
		second++
		for _, it := range items {
			it.Obs.Time = it.Obs.Time.Add(shift)
			msgs = enc.encode(msgs[:0], it)
			for i := range msgs {
				if err := fl.write(&msgs[i]); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e7, "%core")
	b.ReportMetric(float64(fl.size())/float64(b.N)*3600/1e6, "MB/h")
}

// BenchmarkStartFileWithBoardFiles is what starting a recording file costs
// with board files of the default attach_max_bytes in all (16 MiB, attached)
// and a 64 MiB model beyond it (hashed once per recorder, then its hash
// kept): a rotating file starts once an hour by default, so ms/op over
// 3,600,000 is its share of one core.
func BenchmarkStartFileWithBoardFiles(b *testing.B) {
	dir := b.TempDir()
	var files []Attachment
	for i, n := range []int{DefaultAttachMax, 64 << 20} {
		p := filepath.Join(dir, string(rune('a'+i))+".bin")
		data := make([]byte, n)
		rand.NewChaCha8([32]byte{byte(i)}).Read(data)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		files = append(files, Attachment{Name: FilesPrefix + string(rune('1'+i)) + "/" + filepath.Base(p), Path: p, Key: "k"})
	}
	st := newFileState(nil)
	h := Header{Board: []byte("x: 1\n"), Files: files, AttachMax: DefaultAttachMax, files: st}
	if _, err := st.sum(files[1].Path, mustOpen(b, files[1].Path), mustStat(b, files[1].Path)); err != nil {
		b.Fatal(err) // the model's hash, as the recorder's first file takes it
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		fl, err := createFile(filepath.Join(dir, fmt.Sprintf("r%d.mcap", i)), DefaultOptions(), h, t0)
		if err != nil {
			b.Fatal(err)
		}
		if err := fl.close(nil); err != nil {
			b.Fatal(err)
		}
		_ = os.Remove(fl.path)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6/3.6e6*100, "%core@1/h")
}

// BenchmarkHashModel is the one-off cost of a 64 MiB board file beyond
// attach_max_bytes: its SHA-256, read once per recorder.
func BenchmarkHashModel(b *testing.B) {
	p := filepath.Join(b.TempDir(), "model.bin")
	data := make([]byte, 64<<20)
	rand.NewChaCha8([32]byte{9}).Read(data)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := SumFile(p); err != nil {
			b.Fatal(err)
		}
	}
}

func mustOpen(b *testing.B, p string) *os.File {
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close() })
	return f
}

func mustStat(b *testing.B, p string) os.FileInfo {
	st, err := os.Stat(p)
	if err != nil {
		b.Fatal(err)
	}
	return st
}
