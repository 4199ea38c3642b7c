package speechembed

import (
	"github.com/edgeagent/edgeagent/internal/f32"
	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
)

// The network runs over an unbounded strip of mel frames, not over 76-frame
// windows: no convolution pads the time axis and the three time pools
// divide the 8-frame hop, so the embedding of the window that ends at hop k
// is row k−10 of the strip's output, and each hop adds exactly one output
// row. A stream therefore computes only the rows a hop adds (about 1/8 of
// the windowed cost); Embed runs the same code, so they agree bit for bit.
//
// Activations are channels-last rows of width+2 columns: the two zero
// columns are the mel-axis padding of the 1×3 and 3×3 convolutions.

const (
	netWindow = 76                              // mel frames per embedding
	netSkip   = hopFrames - netWindow%hopFrames // frames before the first window starts
	firstHop  = (netSkip + netWindow) / hopFrames
)

// layer is one op of modelfile.Arch with its weights in f32.Conv's layout.
type layer struct {
	op      modelfile.Op
	w, bias []float32
	inW     int // width of the input (output width is inW/op.PW for a pool)
	outW    int
	outC    int
}

// act is the strip of one activation that is still needed: rows
// [first, first+n) of width w (stored w+2) and c channels.
type act struct {
	data     []float32
	first, n int
	w, c     int
}

func (a *act) rowLen() int { return (a.w + 2) * a.c }

// newAct holds rows rows: what one hop adds plus what the consumer keeps
// back, so a stream's buffers are sized once (together ~290 KB; a
// uniform 12 rows took 720 KB).
func newAct(w, c, rows int) act {
	return act{data: make([]float32, rows*(w+2)*c), w: w, c: c}
}

// drop forgets the rows before row keep.
func (a *act) drop(keep int) {
	k := min(keep-a.first, a.n)
	if k <= 0 {
		return
	}
	rl := a.rowLen()
	copy(a.data, a.data[k*rl:a.n*rl])
	a.first += k
	a.n -= k
}

// grow makes room for rows more rows and returns where they start.
func (a *act) grow(rows int) []float32 {
	rl := a.rowLen()
	if need := (a.n + rows) * rl; need > len(a.data) {
		a.data = append(a.data, make([]float32, need-len(a.data))...)
	}
	start := a.n * rl
	a.n += rows
	return a.data[start : a.n*rl]
}

// lookback is how many input rows l keeps after computing what a hop
// allows: a convolution's KH−1, a pool's leftover below PH.
func (l *layer) lookback() int {
	if l.op.Cout != 0 {
		return l.op.KH - 1
	}
	return l.op.PH - 1
}

// buildLayers uses the file's weights as they are (already in f32.Conv's
// order), so the built-in ones stay in the binary's read-only pages.
func buildLayers(ts map[string]modelfile.Tensor) []layer {
	var ls []layer
	w, ci := mels, 0
	for _, op := range modelfile.Arch {
		l := layer{op: op, inW: w, outW: w}
		if op.Cout == 0 {
			l.outW = w / op.PW
			l.outC = ls[len(ls)-1].outC
		} else {
			l.outC = op.Cout
			l.w = ts[modelfile.WeightName(ci)].Data
			l.bias = ts[modelfile.BiasName(ci)].Data
			ci++
		}
		w = l.outW
		ls = append(ls, l)
	}
	return ls
}

// step computes the output rows that in's rows now allow and drops the
// input rows no later output needs.
func (l *layer) step(in, out *act) {
	end := (in.first + in.n) / max(l.op.PH, 1)
	if l.op.Cout != 0 {
		end = in.first + in.n - (l.op.KH - 1)
	}
	start := out.first + out.n
	if end > start {
		rows := end - start
		dst := out.grow(rows)
		if l.op.Cout != 0 {
			l.conv(in, start-in.first, rows, dst)
		} else {
			l.pool(in, start*l.op.PH-in.first, rows, dst)
		}
	}
	if l.op.Cout != 0 {
		in.drop(end)
	} else {
		in.drop(end * l.op.PH)
	}
}

// conv computes rows output rows from input row r0 (local) on, over the
// flattened strip: output position p reads input positions p−1..p+1 (1×3,
// 3×3) of rows p/width+dh, which for the real columns is exactly the padded
// convolution; the pad columns get garbage and are zeroed after.
func (l *layer) conv(in *act, r0, rows int, dst []float32) {
	op := l.op
	wp := l.inW + 2
	a := in.data[r0*in.rowLen():]
	m, c := rows*wp, dst
	if op.KW == 3 {
		m -= 2
		c = dst[op.Cout:]
	}
	f32.Conv(m, op.Cout, op.KH, op.KW*op.Cin, a, op.Cin, wp*op.Cin, l.w, l.bias, c, op.Cout)
	for r := range rows {
		row := dst[r*wp*op.Cout : (r+1)*wp*op.Cout]
		clear(row[:op.Cout])
		clear(row[(wp-1)*op.Cout:])
		if op.Act {
			act := row[op.Cout : (wp-1)*op.Cout]
			for i, v := range act {
				act[i] = max(v, 0.2*v, -0.4) // LeakyReLU(0.2) without a branch
			}
		}
	}
}

// pool takes the maximum over PH×PW blocks; r0 is the local input row of
// the first output row.
func (l *layer) pool(in *act, r0, rows int, dst []float32) {
	ph, pw, ch := l.op.PH, l.op.PW, l.outC
	inRow := in.rowLen()
	outRow := (l.outW + 2) * ch
	for r := range rows {
		o := dst[r*outRow : (r+1)*outRow]
		clear(o[:ch])
		clear(o[(l.outW+1)*ch:])
		for x := range l.outW {
			dstPix := o[(x+1)*ch : (x+2)*ch]
			for c := range dstPix {
				dstPix[c] = float32(-3.4e38)
			}
			for i := range ph {
				src := in.data[(r0+r*ph+i)*inRow:]
				for j := range pw {
					px := src[(1+x*pw+j)*ch : (2+x*pw+j)*ch]
					for c, v := range px {
						dstPix[c] = max(dstPix[c], v)
					}
				}
			}
		}
	}
}
