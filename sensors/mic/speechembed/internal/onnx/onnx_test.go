package onnx

import (
	"encoding/binary"
	"math"
	"testing"
)

// A tiny ModelProto built field by field: opset 13, one Conv node with
// an int list and a float attribute, one raw float initializer.
func TestParseSmallModel(t *testing.T) {
	raw := make([]byte, 8)
	binary.LittleEndian.PutUint32(raw, math.Float32bits(1.5))
	binary.LittleEndian.PutUint32(raw[4:], math.Float32bits(-2))
	tensor := cat(varintField(1, 2), varintField(2, TypeFloat), bytesField(8, []byte("w")), bytesField(9, raw))
	attrInts := cat(bytesField(1, []byte("strides")), bytesField(8, packed(1, 160)))
	attrF := cat(bytesField(1, []byte("alpha")), fixed32Field(2, math.Float32bits(0.2)))
	node := cat(bytesField(1, []byte("x")), bytesField(1, []byte("w")), bytesField(2, []byte("y")),
		bytesField(4, []byte("Conv")), bytesField(5, attrInts), bytesField(5, attrF))
	graph := cat(bytesField(1, node), bytesField(5, tensor), bytesField(11, bytesField(1, []byte("x"))),
		bytesField(12, bytesField(1, []byte("y"))))
	model := cat(varintField(1, 8), bytesField(8, varintField(2, 13)), bytesField(7, graph))

	m, err := Parse(model)
	if err != nil {
		t.Fatal(err)
	}
	if m.Opset != 13 || len(m.Nodes) != 1 || m.Inputs[0] != "x" || m.Outputs[0] != "y" {
		t.Fatalf("model = %+v", m)
	}
	n := m.Nodes[0]
	if n.OpType != "Conv" || len(n.Inputs) != 2 || n.Attrs["alpha"].F != 0.2 ||
		len(n.Attrs["strides"].Ints) != 2 || n.Attrs["strides"].Ints[1] != 160 {
		t.Fatalf("node = %+v", n)
	}
	w := m.Initializers["w"]
	if w == nil || len(w.Float) != 2 || w.Float[0] != 1.5 || w.Float[1] != -2 {
		t.Fatalf("initializer = %+v", w)
	}
	// No prefix may panic; the cut ones must not come back whole.
	for i := 1; i < len(model); i++ {
		if m, err := Parse(model[:i]); err == nil && len(m.Nodes) == 1 && m.Initializers["w"] != nil && len(m.Outputs) == 1 {
			t.Fatalf("prefix %d parsed as the whole model", i)
		}
	}
}

func TestParseRefusesDataThatDoesNotFitTheShape(t *testing.T) {
	tensor := cat(varintField(1, 3), varintField(2, TypeFloat), bytesField(8, []byte("w")), bytesField(9, make([]byte, 8)))
	model := bytesField(7, bytesField(5, tensor))
	if _, err := Parse(model); err == nil {
		t.Fatal("a 3-element tensor with 2 values parsed")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(bytesField(7, bytesField(1, bytesField(4, []byte("Conv")))))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}

func cat(bs ...[]byte) []byte {
	var out []byte
	for _, b := range bs {
		out = append(out, b...)
	}
	return out
}

func varintField(num int, v uint64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, uint64(num)<<3|wireVarint), v)
}

func fixed32Field(num int, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(binary.AppendUvarint(nil, uint64(num)<<3|wireFixed32), v)
}

func bytesField(num int, d []byte) []byte {
	b := binary.AppendUvarint(nil, uint64(num)<<3|wireBytes)
	return append(binary.AppendUvarint(b, uint64(len(d))), d...)
}

func packed(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}
