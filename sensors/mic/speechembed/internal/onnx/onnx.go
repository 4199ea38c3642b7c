// Package onnx reads the parts of an ONNX ModelProto that the converter
// needs: the graph's nodes (op type, inputs, outputs, attributes), its
// initializers (float32 and int64 tensors) and the opset. It is a small
// protobuf wire-format reader of its own, not a general ONNX library:
// fields it does not use are skipped, and anything malformed is an error
// that names the field, never the bytes.
package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Model is the part of a ModelProto the converter reads.
type Model struct {
	Opset        int64
	Nodes        []Node
	Initializers map[string]*Tensor
	Inputs       []string
	Outputs      []string
}

// Node is one NodeProto.
type Node struct {
	Name    string
	OpType  string
	Inputs  []string
	Outputs []string
	Attrs   map[string]Attr
}

// Attr is one AttributeProto; only the kinds the frontend's graphs use are
// kept (float, int, string, floats, ints, tensor).
type Attr struct {
	F      float32
	I      int64
	S      string
	Floats []float32
	Ints   []int64
	T      *Tensor
}

// Tensor is one TensorProto, as float32 or int64 values.
type Tensor struct {
	Name  string
	Dims  []int64
	Type  int32 // ONNX DataType: 1 float, 7 int64, 6 int32
	Float []float32
	Int   []int64
}

// ONNX DataType values this reader decodes.
const (
	TypeFloat = 1
	TypeInt32 = 6
	TypeInt64 = 7
)

// Len is the number of elements the dims describe.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Dims {
		n *= int(d)
	}
	return n
}

// Parse decodes a serialized ModelProto.
func Parse(b []byte) (*Model, error) {
	m := &Model{Initializers: map[string]*Tensor{}}
	err := fields(b, func(num int, wt int, v uint64, data []byte) error {
		switch {
		case num == 7 && wt == wireBytes: // graph
			return m.parseGraph(data)
		case num == 8 && wt == wireBytes: // opset_import
			var domain string
			var version int64
			if err := fields(data, func(num, wt int, v uint64, d []byte) error {
				switch {
				case num == 1 && wt == wireBytes:
					domain = string(d)
				case num == 2 && wt == wireVarint:
					version = int64(v)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("opset_import: %w", err)
			}
			if domain == "" || domain == "ai.onnx" {
				m.Opset = version
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("onnx: %w", err)
	}
	return m, nil
}

func (m *Model) parseGraph(b []byte) error {
	return fields(b, func(num, wt int, v uint64, d []byte) error {
		if wt != wireBytes {
			return nil
		}
		switch num {
		case 1:
			n, err := parseNode(d)
			if err != nil {
				return fmt.Errorf("graph node %d: %w", len(m.Nodes), err)
			}
			m.Nodes = append(m.Nodes, n)
		case 5:
			t, err := parseTensor(d)
			if err != nil {
				return fmt.Errorf("graph initializer %d: %w", len(m.Initializers), err)
			}
			m.Initializers[t.Name] = t
		case 11, 12: // input, output: ValueInfoProto, name is field 1
			name, err := firstString(d, 1)
			if err != nil {
				return fmt.Errorf("graph value info: %w", err)
			}
			if num == 11 {
				m.Inputs = append(m.Inputs, name)
			} else {
				m.Outputs = append(m.Outputs, name)
			}
		}
		return nil
	})
}

func firstString(b []byte, want int) (string, error) {
	var s string
	err := fields(b, func(num, wt int, v uint64, d []byte) error {
		if num == want && wt == wireBytes {
			s = string(d)
		}
		return nil
	})
	return s, err
}

func parseNode(b []byte) (Node, error) {
	n := Node{Attrs: map[string]Attr{}}
	err := fields(b, func(num, wt int, v uint64, d []byte) error {
		if wt != wireBytes {
			return nil
		}
		switch num {
		case 1:
			n.Inputs = append(n.Inputs, string(d))
		case 2:
			n.Outputs = append(n.Outputs, string(d))
		case 3:
			n.Name = string(d)
		case 4:
			n.OpType = string(d)
		case 5:
			name, a, err := parseAttr(d)
			if err != nil {
				return fmt.Errorf("attribute %d: %w", len(n.Attrs), err)
			}
			n.Attrs[name] = a
		}
		return nil
	})
	return n, err
}

func parseAttr(b []byte) (string, Attr, error) {
	var name string
	var a Attr
	err := fields(b, func(num, wt int, v uint64, d []byte) error {
		switch {
		case num == 1 && wt == wireBytes:
			name = string(d)
		case num == 2 && wt == wireFixed32:
			a.F = math.Float32frombits(uint32(v))
		case num == 3 && wt == wireVarint:
			a.I = int64(v)
		case num == 4 && wt == wireBytes:
			a.S = string(d)
		case num == 5 && wt == wireBytes:
			t, err := parseTensor(d)
			if err != nil {
				return fmt.Errorf("tensor: %w", err)
			}
			a.T = t
		case num == 7:
			fs, err := floats(wt, v, d)
			if err != nil {
				return fmt.Errorf("floats: %w", err)
			}
			a.Floats = append(a.Floats, fs...)
		case num == 8:
			is, err := varints(wt, v, d)
			if err != nil {
				return fmt.Errorf("ints: %w", err)
			}
			a.Ints = append(a.Ints, is...)
		}
		return nil
	})
	return name, a, err
}

func parseTensor(b []byte) (*Tensor, error) {
	t := &Tensor{}
	var raw []byte
	err := fields(b, func(num, wt int, v uint64, d []byte) error {
		switch num {
		case 1:
			is, err := varints(wt, v, d)
			if err != nil {
				return fmt.Errorf("dims: %w", err)
			}
			t.Dims = append(t.Dims, is...)
		case 2:
			t.Type = int32(v)
		case 4:
			fs, err := floats(wt, v, d)
			if err != nil {
				return fmt.Errorf("float_data: %w", err)
			}
			t.Float = append(t.Float, fs...)
		case 5, 7: // int32_data, int64_data
			is, err := varints(wt, v, d)
			if err != nil {
				return fmt.Errorf("int data: %w", err)
			}
			t.Int = append(t.Int, is...)
		case 8:
			t.Name = string(d)
		case 9:
			raw = d
		case 13, 14:
			if num == 14 && v == 1 || num == 13 {
				return errors.New("external data is not supported")
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, d := range t.Dims {
		if d < 0 || d > 1<<28 {
			return nil, errors.New("tensor dimension out of range")
		}
	}
	if raw != nil {
		if err := t.decodeRaw(raw); err != nil {
			return nil, err
		}
	}
	n := t.Len()
	switch t.Type {
	case TypeFloat:
		if len(t.Float) != n {
			return nil, fmt.Errorf("float tensor has %d values for %d elements", len(t.Float), n)
		}
	case TypeInt32, TypeInt64:
		if len(t.Int) != n {
			return nil, fmt.Errorf("int tensor has %d values for %d elements", len(t.Int), n)
		}
	}
	return t, nil
}

func (t *Tensor) decodeRaw(raw []byte) error {
	switch t.Type {
	case TypeFloat:
		if len(raw)%4 != 0 {
			return errors.New("raw float data is not a multiple of 4 bytes")
		}
		t.Float = make([]float32, len(raw)/4)
		for i := range t.Float {
			t.Float[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case TypeInt64:
		if len(raw)%8 != 0 {
			return errors.New("raw int64 data is not a multiple of 8 bytes")
		}
		t.Int = make([]int64, len(raw)/8)
		for i := range t.Int {
			t.Int[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case TypeInt32:
		if len(raw)%4 != 0 {
			return errors.New("raw int32 data is not a multiple of 4 bytes")
		}
		t.Int = make([]int64, len(raw)/4)
		for i := range t.Int {
			t.Int[i] = int64(int32(binary.LittleEndian.Uint32(raw[4*i:])))
		}
	default:
		return fmt.Errorf("tensor data type %d is not supported", t.Type)
	}
	return nil
}

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

var errTruncated = errors.New("truncated protobuf")

// fields walks one message: for each field it calls fn with the field
// number, wire type, the scalar value (varint or fixed) and, for
// length-delimited fields, the bytes.
func fields(b []byte, fn func(num, wt int, v uint64, d []byte) error) error {
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		if n <= 0 {
			return errTruncated
		}
		b = b[n:]
		num, wt := int(key>>3), int(key&7)
		if num == 0 {
			return errors.New("protobuf field number 0")
		}
		var v uint64
		var d []byte
		switch wt {
		case wireVarint:
			v, n = binary.Uvarint(b)
			if n <= 0 {
				return errTruncated
			}
			b = b[n:]
		case wireFixed64:
			if len(b) < 8 {
				return errTruncated
			}
			v, b = binary.LittleEndian.Uint64(b), b[8:]
		case wireFixed32:
			if len(b) < 4 {
				return errTruncated
			}
			v, b = uint64(binary.LittleEndian.Uint32(b)), b[4:]
		case wireBytes:
			l, n := binary.Uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errTruncated
			}
			d, b = b[n:n+int(l)], b[n+int(l):]
		default:
			return fmt.Errorf("protobuf wire type %d is not supported", wt)
		}
		if err := fn(num, wt, v, d); err != nil {
			return err
		}
	}
	return nil
}

// floats decodes a repeated float field, packed or not.
func floats(wt int, v uint64, d []byte) ([]float32, error) {
	switch wt {
	case wireFixed32:
		return []float32{math.Float32frombits(uint32(v))}, nil
	case wireBytes:
		if len(d)%4 != 0 {
			return nil, errTruncated
		}
		out := make([]float32, len(d)/4)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(d[4*i:]))
		}
		return out, nil
	}
	return nil, fmt.Errorf("wire type %d for a float field", wt)
}

// varints decodes a repeated integer field, packed or not.
func varints(wt int, v uint64, d []byte) ([]int64, error) {
	switch wt {
	case wireVarint:
		return []int64{int64(v)}, nil
	case wireBytes:
		var out []int64
		for len(d) > 0 {
			x, n := binary.Uvarint(d)
			if n <= 0 {
				return nil, errTruncated
			}
			out = append(out, int64(x))
			d = d[n:]
		}
		return out, nil
	}
	return nil, fmt.Errorf("wire type %d for an integer field", wt)
}
