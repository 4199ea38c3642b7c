package record

import (
	"bytes"
	"image"
	"image/jpeg"
	"math/rand/v2"
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
