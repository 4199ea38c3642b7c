package main

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/onnx"
)

// melOps is melspectrogram.onnx's graph: an STFT as two strided
// convolutions, power, mel matrix, 10·log10 with a floor of 1e-10, then
// everything below the input's maximum − 80 dB raised to it.
var melOps = []string{"Constant", "Unsqueeze", "Conv", "Conv", "Constant", "Unsqueeze", "Transpose",
	"Constant", "Unsqueeze", "Transpose", "Constant", "Pow", "Constant", "Pow", "Add", "MatMul",
	"Clip", "Log", "Constant", "Mul", "Constant", "Div", "Constant", "Sub", "ReduceMax", "Constant",
	"Sub", "Cast", "Clip"}

// melTensors checks the graph and returns the analysis window and the mel
// filters. The STFT's two weight tensors (257×512 each) are checked to be
// window·cos and window·sin of the 512-point DFT and kept as the window
// alone: the runtime does the same transform with an FFT.
func melTensors(m *onnx.Model) ([]modelfile.Tensor, error) {
	var ops []string
	for _, n := range m.Nodes {
		ops = append(ops, n.OpType)
	}
	if !slices.Equal(ops, melOps) {
		return nil, errors.New("melspectrogram graph is not the one this converter knows")
	}
	for _, i := range []int{2, 3} {
		a := m.Nodes[i].Attrs
		if !slices.Equal(a["kernel_shape"].Ints, []int64{512}) || !slices.Equal(a["strides"].Ints, []int64{160}) ||
			slices.ContainsFunc(a["pads"].Ints, func(p int64) bool { return p != 0 }) {
			return nil, errors.New("STFT is not a 512-sample window with hop 160 and no padding")
		}
	}
	if err := checkConsts(m); err != nil {
		return nil, err
	}
	re, im := m.Initializers[m.Nodes[2].Inputs[1]], m.Initializers[m.Nodes[3].Inputs[1]]
	filters := m.Initializers[m.Nodes[15].Inputs[1]]
	if !shape(re, modelfile.Bins, 1, modelfile.FFTSize) || !shape(im, modelfile.Bins, 1, modelfile.FFTSize) ||
		!shape(filters, modelfile.Bins, modelfile.Mels) {
		return nil, errors.New("STFT or mel weights have unexpected shapes")
	}
	window := slices.Clone(re.Float[:modelfile.FFTSize]) // bin 0: cos = 1
	if err := checkDFT(window, re.Float, im.Float); err != nil {
		return nil, err
	}
	return []modelfile.Tensor{
		{Name: modelfile.WindowName, Dims: []int{modelfile.FFTSize}, Data: window},
		{Name: modelfile.FiltersName, Dims: []int{modelfile.Bins, modelfile.Mels}, Data: filters.Float},
	}, nil
}

// checkConsts checks the constants the runtime hard-codes: squaring, the
// 1e-10 floor, ×10 / ln 10, reference 0 dB and the 80 dB range.
func checkConsts(m *onnx.Model) error {
	scalar := func(node int) float32 {
		t := m.Nodes[node].Attrs["value"].T
		if t == nil || len(t.Float) != 1 {
			return float32(math.NaN())
		}
		return t.Float[0]
	}
	floor := m.Initializers[m.Nodes[16].Inputs[1]]
	if scalar(10) != 2 || scalar(12) != 2 || scalar(18) != 10 || scalar(20) != float32(math.Ln10) ||
		scalar(22) != 0 || scalar(25) != 80 || floor == nil || len(floor.Float) != 1 || floor.Float[0] != 1e-10 {
		return errors.New("melspectrogram constants are not the ones the runtime implements")
	}
	if a := m.Nodes[24].Attrs; len(a["axes"].Ints) != 0 || a["keepdims"].I != 0 {
		return errors.New("melspectrogram's maximum is not over the whole input")
	}
	return nil
}

// checkDFT: re[k][n] = w[n]·cos(2πkn/512), im[k][n] = ±w[n]·sin(2πkn/512)
// to float32 rounding.
func checkDFT(w, re, im []float32) error {
	const N = modelfile.FFTSize
	worst := 0.0
	for k := range modelfile.Bins {
		for n := range N {
			ang := 2 * math.Pi * float64(k*n%N) / N
			c, s := float64(w[n])*math.Cos(ang), float64(w[n])*math.Sin(ang)
			worst = max(worst, math.Abs(float64(re[k*N+n])-c), math.Abs(math.Abs(float64(im[k*N+n]))-math.Abs(s)))
		}
	}
	if worst > 1e-6 {
		return fmt.Errorf("STFT weights are not a windowed DFT (off by %.2g)", worst)
	}
	return nil
}

func shape(t *onnx.Tensor, dims ...int64) bool {
	return t != nil && t.Type == onnx.TypeFloat && slices.Equal(t.Dims, dims)
}
