package audio

import (
	"bytes"
	"encoding/binary"
	"io"
	"math"
	"path/filepath"
	"testing"
)

func tone(rate int, freq, amp float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = amp * math.Sin(2*math.Pi*freq*float64(i)/float64(rate))
	}
	return out
}

// goertzelAmp measures the amplitude of freq in s (int16 scale).
func goertzelAmp(s []int16, rate int, freq float64) float64 {
	var re, im float64
	for i, v := range s {
		ph := 2 * math.Pi * freq * float64(i) / float64(rate)
		re += float64(v) * math.Cos(ph)
		im += float64(v) * math.Sin(ph)
	}
	return 2 * math.Hypot(re, im) / float64(len(s))
}

func encode(f Format, frames [][]float64) []byte {
	var b bytes.Buffer
	for i := range frames[0] {
		for c := range frames {
			v := frames[c][i]
			switch f.Encoding {
			case S16LE:
				binary.Write(&b, binary.LittleEndian, int16(math.Round(v)))
			case S24LE:
				x := int32(math.Round(v * 256))
				b.Write([]byte{byte(x), byte(x >> 8), byte(x >> 16)})
			case S32LE:
				binary.Write(&b, binary.LittleEndian, int32(math.Round(v*65536)))
			case F32LE:
				binary.Write(&b, binary.LittleEndian, float32(v/32768))
			case U8:
				b.WriteByte(byte(int(math.Round(v/256)) + 128))
			}
		}
	}
	return b.Bytes()
}

func TestWAVRoundTrip(t *testing.T) {
	in := make([]int16, 1234)
	for i := range in {
		in[i] = int16(i*37 - 20000)
	}
	path := filepath.Join(t.TempDir(), "x.wav")
	if err := WriteWAVFile(path, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadWAVFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d samples, wrote %d", len(out), len(in))
	}
	for i := range in {
		if in[i] != out[i] {
			t.Fatalf("sample %d: %d != %d", i, out[i], in[i])
		}
	}
}

// wavBytes builds a WAV file by hand with an extra LIST chunk (odd-sized, so
// padded) before the data, as recorders write them.
func wavBytes(f Format, tag uint16, data []byte) []byte {
	var b bytes.Buffer
	w := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	w(uint32(0)) // wrong on purpose: readers must not trust it
	b.WriteString("WAVE")
	b.WriteString("LIST")
	w(uint32(3))
	b.Write([]byte{1, 2, 3, 0})
	b.WriteString("fmt ")
	if tag == 0xFFFE {
		w(uint32(40))
	} else {
		w(uint32(16))
	}
	w(tag)
	w(uint16(f.Channels))
	w(uint32(f.Rate))
	w(uint32(f.Rate * f.frameBytes()))
	w(uint16(f.frameBytes()))
	w(uint16(f.Encoding.Width() * 8))
	if tag == 0xFFFE {
		w(uint16(22))
		w(uint16(f.Encoding.Width() * 8))
		w(uint32(0))
		sub := uint16(1)
		if f.Encoding == F32LE {
			sub = 3
		}
		w(sub)
		b.Write(make([]byte, 14))
	}
	b.WriteString("data")
	w(uint32(len(data)))
	b.Write(data)
	return b.Bytes()
}

func TestWAVFormatsConvertTo16kMono(t *testing.T) {
	const freq, amp = 440.0, 8000.0
	for _, tc := range []struct {
		f   Format
		tag uint16
	}{
		{Format{16000, 1, S16LE}, 1},
		{Format{16000, 2, S24LE}, 1},
		{Format{48000, 2, S16LE}, 1},
		{Format{44100, 1, F32LE}, 3},
		{Format{48000, 1, S32LE}, 0xFFFE},
		{Format{8000, 1, U8}, 1},
		{Format{22050, 1, F32LE}, 0xFFFE},
	} {
		n := tc.f.Rate / 2 // 0.5 s
		l := tone(tc.f.Rate, freq, amp, n)
		chans := [][]float64{l}
		if tc.f.Channels == 2 {
			// Right channel in phase at half level: the mono mix is 0.75 amp.
			r := make([]float64, n)
			for i := range r {
				r[i] = l[i] / 2
			}
			chans = append(chans, r)
		}
		wr, err := NewWAVReader(bytes.NewReader(wavBytes(tc.f, tc.tag, encode(tc.f, chans))))
		if err != nil {
			t.Fatalf("%+v: %v", tc.f, err)
		}
		if wr.Format != tc.f {
			t.Fatalf("parsed format %+v, want %+v", wr.Format, tc.f)
		}
		s, err := ReadAll(wr)
		if err != nil {
			t.Fatal(err)
		}
		if want := Rate / 2; abs(len(s)-want) > 40 {
			t.Errorf("%+v: %d output samples, want about %d", tc.f, len(s), want)
		}
		want := amp
		if tc.f.Channels == 2 {
			want = 0.75 * amp
		}
		// Measure away from the start, where the filter is still filling.
		got := goertzelAmp(s[1000:7000], Rate, freq)
		tol := 0.01
		if tc.f.Encoding == U8 {
			tol = 0.03 // 8-bit quantisation
		}
		if math.Abs(got-want)/want > tol {
			t.Errorf("%+v: tone amplitude %.0f, want %.0f", tc.f, got, want)
		}
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func TestResamplerRejectsAliases(t *testing.T) {
	// A 10 kHz tone at 48 kHz has no place at 16 kHz: naive decimation
	// would fold it to 6 kHz. The filter must remove it (> 60 dB down).
	const amp = 16000.0
	in := tone(48000, 10000, amp, 48000)
	f := make([]float32, len(in))
	for i, v := range in {
		f[i] = float32(v)
	}
	r := NewResampler(48000, 16000)
	out := AppendInt16(nil, r.Process(nil, f))
	alias := goertzelAmp(out[2000:14000], 16000, 6000)
	if db := 20 * math.Log10(alias/amp); db > -60 {
		t.Fatalf("alias at 6 kHz only %.1f dB down", db)
	}
	// And a 3 kHz tone passes with its amplitude.
	in = tone(48000, 3000, amp, 48000)
	for i, v := range in {
		f[i] = float32(v)
	}
	r = NewResampler(48000, 16000)
	out = AppendInt16(nil, r.Process(nil, f))
	if got := goertzelAmp(out[2000:14000], 16000, 3000); math.Abs(got-amp)/amp > 0.01 {
		t.Fatalf("3 kHz passband amplitude %.0f, want %.0f", got, amp)
	}
}

func TestConverterIndependentOfChunking(t *testing.T) {
	f := Format{Rate: 44100, Channels: 2, Encoding: S24LE}
	l := tone(44100, 1000, 9000, 44100/4)
	raw := encode(f, [][]float64{l, l})
	whole := NewConverter(f).Convert(nil, raw)
	c := NewConverter(f)
	var pieces []int16
	for i := 0; i < len(raw); {
		n := 1 + (i*7)%13 // odd sizes that split frames and samples
		if i+n > len(raw) {
			n = len(raw) - i
		}
		pieces = c.Convert(pieces, raw[i:i+n])
		i += n
	}
	if len(pieces) != len(whole) {
		t.Fatalf("chunked gave %d samples, whole %d", len(pieces), len(whole))
	}
	for i := range whole {
		if whole[i] != pieces[i] {
			t.Fatalf("sample %d differs: %d vs %d", i, pieces[i], whole[i])
		}
	}
}

// oneByte hands out its data one byte per Read, like a slow pipe.
type oneByte struct{ b []byte }

func (o *oneByte) Read(p []byte) (int, error) {
	if len(o.b) == 0 {
		return 0, io.EOF
	}
	p[0] = o.b[0]
	o.b = o.b[1:]
	return 1, nil
}

func TestReaderPassthroughIsExact(t *testing.T) {
	in := []int16{0, 1, -1, 32767, -32768, 1234}
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, in)
	got, err := ReadAll(NewReader(&oneByte{b.Bytes()}, Mono16k))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(in) {
		t.Fatalf("got %v", got)
	}
	for i := range in {
		if got[i] != in[i] {
			t.Fatalf("got %v, want %v", got, in)
		}
	}
}

func TestDBFS(t *testing.T) {
	var m Meter
	s := make([]int16, 16000)
	for i, v := range tone(16000, 1000, 32767, len(s)) {
		s[i] = int16(v)
	}
	m.Add(s)
	peak, rms := m.Read()
	if math.Abs(peak) > 0.01 || math.Abs(rms+3.01) > 0.02 {
		t.Fatalf("full-scale sine: peak %.2f rms %.2f dBFS, want 0 and -3.01", peak, rms)
	}
	m.Add(make([]int16, 100))
	if p, r := m.Read(); p != FloorDBFS || r != FloorDBFS {
		t.Fatalf("silence reads %v/%v", p, r)
	}
}

func TestNoiseLevel(t *testing.T) {
	for _, c := range []string{"white", "pink"} {
		n := NewNoise(c, -30, 1)
		s := make([]int16, 60*Rate) // long enough for the slowest pink pole
		n.Fill(s)
		if got := DBFS(RMS(s)); math.Abs(got+30) > 0.5 {
			t.Errorf("%s noise at -30 dBFS measures %.2f", c, got)
		}
	}
	// Same seed, same sound.
	a, b := make([]int16, 100), make([]int16, 100)
	NewNoise("pink", -20, 7).Fill(a)
	NewNoise("pink", -20, 7).Fill(b)
	if a[99] != b[99] || a[50] != b[50] {
		t.Fatal("noise not deterministic")
	}
}

func TestMixAtSNR(t *testing.T) {
	sp := make([]int16, Rate)
	for i, v := range tone(Rate, 500, 5000, len(sp)) {
		sp[i] = int16(v)
	}
	mixed := MixAtSNR(sp, NewNoise("white", -40, 3), 10)
	noise := make([]int16, len(sp))
	for i := range sp {
		noise[i] = mixed[i] - sp[i]
	}
	if snr := 20 * math.Log10(RMS(sp)/RMS(noise)); math.Abs(snr-10) > 0.3 {
		t.Fatalf("SNR %.2f dB, want 10", snr)
	}
}
