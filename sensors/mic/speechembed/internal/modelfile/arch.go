package modelfile

// Op is one step of the embedding network. A convolution has Cout > 0;
// otherwise the step is a max-pool of PH×PW with the same stride.
//
// Convolutions pad the mel (width) axis so its size is kept when KW is 3
// and never pad the time axis, so each output row depends only on KH input
// rows: this is what lets a stream compute only the rows a new hop adds.
type Op struct {
	KH, KW, Cin, Cout int  // convolution
	Act               bool // LeakyReLU(0.2) then max(·, −0.4)
	PH, PW            int  // max-pool
}

// Arch is openWakeWord's embedding_model.onnx (Google's speech_embedding)
// as the converter checks it: 20 convolutions and 5 max-pools over a
// 76×32 mel window, ending in one 96-value row.
var Arch = func() []Op {
	ops := []Op{conv(3, 3, 1, 24), conv(1, 3, 24, 24), conv(3, 1, 24, 24), pool(2, 2)}
	blocks := []struct {
		cin, cout int
		pool      Op
	}{{24, 48, pool(1, 2)}, {48, 72, pool(2, 2)}, {72, 96, pool(1, 2)}, {96, 96, pool(2, 2)}}
	for _, b := range blocks {
		ops = append(ops, conv(1, 3, b.cin, b.cout), conv(3, 1, b.cout, b.cout),
			conv(1, 3, b.cout, b.cout), conv(3, 1, b.cout, b.cout), b.pool)
	}
	last := conv(3, 1, 96, 96)
	last.Act = false
	return append(ops, last)
}()

func conv(kh, kw, cin, cout int) Op { return Op{KH: kh, KW: kw, Cin: cin, Cout: cout, Act: true} }
func pool(ph, pw int) Op            { return Op{PH: ph, PW: pw} }

// Tensor names and shapes of a model file.
const (
	WindowName  = "stft.window"
	FiltersName = "mel.filters"
	FFTSize     = 512
	Bins        = FFTSize/2 + 1
	Mels        = 32
)

// WeightName and BiasName name convolution i's tensors: weights are
// [KH, KW, Cin, Cout] (ONNX's [Cout, Cin, KH, KW] reordered by the
// converter into the order f32.Conv reads: one tap's KW·Cin inputs, each a
// row of Cout weights), bias [Cout].
func WeightName(i int) string { return "conv" + itoa(i) + ".weight" }

// BiasName: see WeightName.
func BiasName(i int) string { return "conv" + itoa(i) + ".bias" }

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
