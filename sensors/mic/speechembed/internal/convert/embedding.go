package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/onnx"
)

// embeddingTensors walks embedding_model.onnx and checks it op by op
// against modelfile.Arch: a Reshape of the [N,76,32,1] input to NCHW, then
// per convolution Conv (+LeakyRelu 0.2, Max −0.4), the MaxPools, and a
// final Reshape to 96 values.
func embeddingTensors(m *onnx.Model) ([]modelfile.Tensor, error) {
	nodes := m.Nodes
	if len(nodes) < 2 || nodes[0].OpType != "Reshape" || nodes[len(nodes)-1].OpType != "Reshape" {
		return nil, errors.New("embedding graph does not start and end with a Reshape")
	}
	if t := m.Initializers[nodes[0].Inputs[1]]; t == nil || !slices.Equal(t.Int, []int64{-1, 1, 76, 32}) {
		return nil, errors.New("embedding input is not reshaped to [N,1,76,32]")
	}
	nodes = nodes[1 : len(nodes)-1]
	var out []modelfile.Tensor
	ci := 0
	for _, op := range modelfile.Arch {
		if len(nodes) == 0 {
			return nil, errors.New("embedding graph is shorter than the architecture")
		}
		if op.Cout == 0 {
			if err := checkPool(nodes[0], op); err != nil {
				return nil, err
			}
			nodes = nodes[1:]
			continue
		}
		ts, used, err := convTensors(m, nodes, op, ci)
		if err != nil {
			return nil, fmt.Errorf("convolution %d: %w", ci, err)
		}
		out = append(out, ts...)
		nodes = nodes[used:]
		ci++
	}
	if len(nodes) != 0 {
		return nil, errors.New("embedding graph is longer than the architecture")
	}
	return out, nil
}

func checkPool(n onnx.Node, op modelfile.Op) error {
	k := []int64{int64(op.PH), int64(op.PW)}
	if n.OpType != "MaxPool" || !slices.Equal(n.Attrs["kernel_shape"].Ints, k) || !slices.Equal(n.Attrs["strides"].Ints, k) ||
		slices.ContainsFunc(n.Attrs["pads"].Ints, func(p int64) bool { return p != 0 }) {
		return fmt.Errorf("max-pool %dx%d expected, graph differs", op.PH, op.PW)
	}
	return nil
}

// convTensors checks one convolution (and its activation) and returns its
// weight and bias, and how many nodes it spanned.
func convTensors(m *onnx.Model, nodes []onnx.Node, op modelfile.Op, i int) ([]modelfile.Tensor, int, error) {
	c := nodes[0]
	a := c.Attrs
	pad := int64(op.KW / 2)
	if c.OpType != "Conv" || !slices.Equal(a["kernel_shape"].Ints, []int64{int64(op.KH), int64(op.KW)}) ||
		a["group"].I > 1 || slices.ContainsFunc(a["strides"].Ints, func(s int64) bool { return s != 1 }) ||
		slices.ContainsFunc(a["dilations"].Ints, func(s int64) bool { return s != 1 }) {
		return nil, 0, fmt.Errorf("%dx%d convolution expected, graph differs", op.KH, op.KW)
	}
	if p := a["pads"].Ints; !(len(p) == 0 && pad == 0) && !slices.Equal(p, []int64{0, pad, 0, pad}) {
		return nil, 0, errors.New("padding is not on the mel axis only")
	}
	if s := a["auto_pad"].S; s != "" && s != "NOTSET" {
		return nil, 0, errors.New("auto_pad is not supported")
	}
	w := m.Initializers[c.Inputs[1]]
	if !shape(w, int64(op.Cout), int64(op.Cin), int64(op.KH), int64(op.KW)) {
		return nil, 0, errors.New("weights have an unexpected shape")
	}
	bias := make([]float32, op.Cout) // the last convolution has none
	if len(c.Inputs) > 2 {
		b := m.Initializers[c.Inputs[2]]
		if !shape(b, int64(op.Cout)) {
			return nil, 0, errors.New("bias has an unexpected shape")
		}
		copy(bias, b.Float)
	}
	used := 1
	if op.Act {
		if len(nodes) < 3 || nodes[1].OpType != "LeakyRelu" || nodes[1].Attrs["alpha"].F != 0.2 || nodes[2].OpType != "Max" {
			return nil, 0, errors.New("LeakyRelu(0.2) and Max expected after it")
		}
		if t := m.Initializers[nodes[2].Inputs[1]]; t == nil || len(t.Float) != 1 || t.Float[0] != -0.4 {
			return nil, 0, errors.New("the Max is not max(x, -0.4)")
		}
		used = 3
	}
	return []modelfile.Tensor{
		{Name: modelfile.WeightName(i), Dims: []int{op.KH, op.KW, op.Cin, op.Cout}, Data: kernelLayout(w.Float, op)},
		{Name: modelfile.BiasName(i), Dims: []int{op.Cout}, Data: bias},
	}, used, nil
}

// kernelLayout reorders ONNX's [Cout][Cin][KH][KW] into [KH][KW][Cin][Cout],
// the order the runtime's convolution reads (modelfile.WeightName), so
// the runtime uses the file's values as they are.
func kernelLayout(w []float32, op modelfile.Op) []float32 {
	out := make([]float32, len(w))
	for o := range op.Cout {
		for c := range op.Cin {
			for h := range op.KH {
				for x := range op.KW {
					out[((h*op.KW+x)*op.Cin+c)*op.Cout+o] = w[((o*op.Cin+c)*op.KH+h)*op.KW+x]
				}
			}
		}
	}
	return out
}
