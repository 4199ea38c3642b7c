package audio

import (
	"bytes"
	"testing"
)

// FuzzWAVReader: any file handed to the wake-word tools or the WAV clip
// source: the header parser and the converter to 16 kHz mono never panic
// or loop, and never make more samples than the data can hold (rates are
// at least 4 kHz, so at most 4 output samples per input frame).
func FuzzWAVReader(f *testing.F) {
	var good bytes.Buffer
	if err := WriteWAV(&good, Rate, []int16{0, 1000, -1000, 32767, -32768}); err != nil {
		f.Fatal(err)
	}
	f.Add(good.Bytes())
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x03\x00\x02\x00\x44\xac\x00\x00\x00\x00\x00\x00\x08\x00\x20\x00data\xff\xff\xff\xff\x00\x00\x80\x3f"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVELIST\x04\x00\x00\x00abcddata\x00\x00\x00\x00"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := NewWAVReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		if err := w.Format.Validate(); err != nil {
			t.Fatalf("accepted an invalid format: %v", err)
		}
		samples, _ := ReadAll(w)
		if frames := len(data) / w.Format.frameBytes(); len(samples) > 4*frames+8 {
			t.Fatalf("%d samples from %d input frames", len(samples), frames)
		}
	})
}
