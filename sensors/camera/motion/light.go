package motion

import "math"

// lighting fits, per tile of the downscaled frame, how the light changed
// between the background and the frame: bg ≈ gain·cur + offset. One global
// fit (the detector did that before) is pulled by whatever dominates the
// frame; where the change is not one affine map of the whole frame (a
// lamp lighting one side, an exposure change through a non-linear camera
// curve, a busy scene biasing the fit) its error grows with the distance
// from the frame's mean, and high-contrast static structure (a pylon, a
// fence, the sky) rises above the threshold. Tiles of 16×16 pixels each
// fit their own map, which the difference pass interpolates bilinearly
// between tile centres, so there are no seams.
//
// A tile's fit must not explain a moving thing away. Four things keep it
// from doing so: pixels changed in the previous frame (dilated) are left
// out; the tiles' pass keeps only the pixels that the global map (from a
// sparse first pass) explains to within the threshold; a tile with fewer
// than half its usable pixels left takes its neighbours' map (or the
// global one); and a tile's map may only refine the global one (gain
// within ×1.2, offset within half the threshold at the tile's mean) — a
// local change larger than that is a light step, which re-bases. Gains
// are shrunk towards the global gain in proportion to how little contrast
// a tile has (ridge regression): a flat patch of sky says little about
// gain, only about offset.
//
// The pure-Go and the OpenCV detectors share this code.
type lighting struct {
	sw, sh int
	tx, ty int       // tiles across and down
	xs, ys []int     // tile boundaries, tx+1 and ty+1
	usable []int     // per tile: sampled, unmasked pixels
	moms   []moments // per tile, of the last fit's second pass
	// the last fit's global map and threshold, if it fitted (else the map
	// is the identity)
	gain, offset, thr float64
	fitted            bool
	// per tile, the map from background to frame: cur ≈ (bg − o)·ig
	o, ig []float32
	ok    []bool // the tile has a fit of its own (or grown from neighbours)
	grew  []bool // filled in this round of fill
	// bilinear interpolation between tile centres, as OpenCV's
	// INTER_LINEAR resize of the tile grid to the frame would do it
	colT, rowT []int32
	colF, rowF []float32
	segs       []segment
	lin        []linear  // per segment, for the current row
	rowO       []float32 // the current row's parameters, per tile column
	rowIG      []float32
}

// tileSize is a tile's nominal side in downscaled pixels: large enough to
// fit two parameters to (64 samples), small enough to follow a lamp.
const tileSize = 16

// ridge is the contrast (variance, levels²) at which a tile's own gain and
// the global one weigh the same.
const ridge = 100

func (l *lighting) init(sw, sh int, mask []uint8) {
	l.sw, l.sh = sw, sh
	l.tx, l.ty = max(1, (sw+tileSize/2)/tileSize), max(1, (sh+tileSize/2)/tileSize)
	l.xs, l.ys = bounds(sw, l.tx), bounds(sh, l.ty)
	n := l.tx * l.ty
	// Counted over the very samples sums takes (every other pixel of every
	// other row, each tile from its even-aligned bounds), so that a tile's
	// fit is judged against the pixels it could have had.
	l.usable = make([]int, n)
	for ty := range l.ty {
		for y := l.ys[ty] + l.ys[ty]&1; y < l.ys[ty+1]; y += 2 {
			for tx := range l.tx {
				for x := l.xs[tx] + l.xs[tx]&1; x < l.xs[tx+1]; x += 2 {
					if mask[y*sw+x] == 0 {
						l.usable[ty*l.tx+tx]++
					}
				}
			}
		}
	}
	l.moms = make([]moments, n)
	l.o, l.ig = make([]float32, n), make([]float32, n)
	l.ok, l.grew = make([]bool, n), make([]bool, n)
	l.colT, l.colF = interp(sw, l.tx)
	l.segs = segments(l.colT, l.colF, l.tx, sw)
	l.lin = make([]linear, len(l.segs))
	l.rowT, l.rowF = interp(sh, l.ty)
	l.rowO, l.rowIG = make([]float32, l.tx), make([]float32, l.tx)
	l.identity()
}

func bounds(n, tiles int) []int {
	b := make([]int, tiles+1)
	for i := range b {
		b[i] = i * n / tiles
	}
	return b
}

// interp returns, per pixel of a line of n pixels covered by tiles tiles,
// the tile whose centre is at or left of it (clamped so that the next one
// exists) and its weight on the next tile: OpenCV's INTER_LINEAR mapping
// src = (dst+0.5)·tiles/n − 0.5, clamped at the borders.
func interp(n, tiles int) ([]int32, []float32) {
	t, f := make([]int32, n), make([]float32, n)
	for i := range n {
		s := (float64(i)+0.5)*float64(tiles)/float64(n) - 0.5
		switch {
		case tiles == 1 || s <= 0:
			t[i], f[i] = 0, 0
		case s >= float64(tiles-1):
			t[i], f[i] = int32(tiles-2), 1
		default:
			k := math.Floor(s)
			t[i], f[i] = int32(k), float32(s-k)
		}
	}
	return t, f
}

func (l *lighting) identity() {
	for i := range l.o {
		l.o[i], l.ig[i] = 0, 1
	}
}

// fit fits the tiles' maps from the sampled pixels of cur and bg (every
// other pixel of every other row) that are not masked, not moving (in the
// previous frame) and not near the frame's black or white (lo, hi), where
// clipping breaks the affine model. It returns the global fit, whose jumps
// tell a light switched on, and the frame's mean.
func (l *lighting) fit(cur, bg []float32, moving, mask []uint8, lo, hi, thr float32) (gain, offset, mean float64) {
	all := sparseSums(cur, bg, moving, mask, l.sw, l.sh, lo, hi)
	g1, o1, mean := all.solve(1, 0)
	all.n *= 4 // in the second pass's samples: it takes four times as many
	l.fitted = false
	if all.n < 16 {
		l.identity()
		return 1, 0, mean
	}
	l.sums(l.moms, cur, bg, moving, mask, lo, hi, thr, float32(g1), float32(o1))
	var in moments
	for _, m := range l.moms {
		in.add(m)
	}
	if in.n < all.n/4 || in.n < 16 {
		// Most of the frame changed: the fit would describe the moving
		// things, not the lighting. Leave it to the lightning rule.
		l.identity()
		_, _, mean = in.solve(1, 0)
		return 1, 0, mean
	}
	gain, offset, mean = in.solve(1, 0)
	l.gain, l.offset, l.thr, l.fitted = gain, offset, float64(thr), true
	l.tiles(true)
	return gain, offset, mean
}

// tiles solves each tile's map from the moments of the last fit. With
// limit, a tile may only refine the global map: one far from it has
// fitted something that moves (a thing of even colour covering much of
// the tile, come from outside the moving pixels), and a local light that
// far off is a step, which re-bases. Without, as when re-basing after a
// step, a tile follows a lamp's light as well as it can.
func (l *lighting) tiles(limit bool) {
	for i, m := range l.moms {
		l.ok[i] = false
		if int(m.n) < max(8, l.usable[i]/2) {
			continue
		}
		g, o, mx := m.solve(l.gain, ridge)
		if r := g / l.gain; limit && (r < 1/maxTileGain || r > maxTileGain ||
			math.Abs((g-l.gain)*mx+o-l.offset) > l.thr/2) {
			continue
		}
		l.ok[i] = true
		l.o[i], l.ig[i] = float32(o), float32(1/g)
	}
	l.fill(float32(l.offset), float32(1/l.gain))
}

// maxTileGain bounds a tile's gain relative to the global one.
const maxTileGain = 1.2

// fill gives the tiles without a fit of their own (mostly moving, masked or
// clipped) the mean map of their neighbours that have one, growing from
// the fitted tiles outwards, so that a local light (a lamp) is followed
// under a person too; tiles with no fitted tile anywhere take the global
// map (o, ig).
func (l *lighting) fill(o, ig float32) {
	for {
		grown := false
		for t, ok := range l.ok {
			if ok {
				continue
			}
			x, y := t%l.tx, t/l.tx
			var n, so, sg float32
			for ny := max(y-1, 0); ny <= min(y+1, l.ty-1); ny++ {
				for nx := max(x-1, 0); nx <= min(x+1, l.tx-1); nx++ {
					if k := ny*l.tx + nx; l.ok[k] && !l.grew[k] {
						n++
						so += l.o[k]
						sg += l.ig[k]
					}
				}
			}
			if n > 0 {
				l.o[t], l.ig[t] = so/n, sg/n
				l.grew[t] = true
				grown = true
			}
		}
		if !grown {
			break
		}
		// this round's tiles count as fitted for the next round
		for t, g := range l.grew {
			if g {
				l.ok[t], l.grew[t] = true, false
			}
		}
	}
	for t, ok := range l.ok {
		if !ok {
			l.o[t], l.ig[t] = o, ig
		}
	}
}

// sparseSums is the first pass: the global moments over every fourth pixel
// of every fourth row that is not masked, not moving and not near black or
// white. It only has to tell the second pass, per tile, which pixels the
// global map explains; a sixteenth of the pixels is plenty for that.
func sparseSums(cur, bg []float32, moving, mask []uint8, sw, sh int, lo, hi float32) moments {
	var m moments
	for y := 0; y < sh; y += 4 {
		c, b := cur[y*sw:(y+1)*sw], bg[y*sw:(y+1)*sw]
		mv, mk := moving[y*sw:(y+1)*sw], mask[y*sw:(y+1)*sw]
		var n, sx, sy, sxx, sxy float32
		for x := 0; x < sw; x += 4 {
			v, u := c[x], b[x]
			if mv[x]|mk[x] != 0 || v <= lo || v >= hi {
				continue
			}
			n++
			sx += v
			sy += u
			sxx += v * v
			sxy += v * u
		}
		m.add(moments{float64(n), float64(sx), float64(sy), float64(sxx), float64(sxy)})
	}
	return m
}

// sums is the second pass: each tile's moments over every other pixel of
// every other row that the global map g, o explains to within thr (and
// that is not masked, moving, or near black or white). Partial sums per
// tile and row are float32, which keeps the inner loop cheap; a tile row
// has a few dozen samples.
func (l *lighting) sums(ms []moments, cur, bg []float32, moving, mask []uint8, lo, hi, thr, g, o float32) {
	clear(ms)
	sw := l.sw
	for ty := range l.ty {
		for y := l.ys[ty] + l.ys[ty]&1; y < l.ys[ty+1]; y += 2 {
			c, b := cur[y*sw:(y+1)*sw], bg[y*sw:(y+1)*sw]
			mv, mk := moving[y*sw:(y+1)*sw], mask[y*sw:(y+1)*sw]
			for tx := range l.tx {
				var n, sx, sy, sxx, sxy float32
				for x := l.xs[tx] + l.xs[tx]&1; x < l.xs[tx+1]; x += 2 {
					v, u := c[x], b[x]
					if mv[x]|mk[x] != 0 || v <= lo || v >= hi {
						continue
					}
					if e := g*v + o - u; e > thr || e < -thr {
						continue
					}
					n++
					sx += v
					sy += u
					sxx += v * v
					sxy += v * u
				}
				m := &ms[ty*l.tx+tx]
				m.n += float64(n)
				m.sx += float64(sx)
				m.sy += float64(sy)
				m.sxx += float64(sxx)
				m.sxy += float64(sxy)
			}
		}
	}
}

// rowParams interpolates the tiles' maps to row y, per tile column, into
// l.rowO and l.rowIG.
func (l *lighting) rowParams(y int) {
	t0, f := int(l.rowT[y]), l.rowF[y]
	t1 := min(t0+1, l.ty-1)
	a, b := t0*l.tx, t1*l.tx
	for i := range l.tx {
		l.rowO[i] = l.o[a+i] + f*(l.o[b+i]-l.o[a+i])
		l.rowIG[i] = l.ig[a+i] + f*(l.ig[b+i]-l.ig[a+i])
	}
}

// row fills o and ig (sw long) with the map's parameters for row y,
// interpolated between the tile centres.
func (l *lighting) row(y int, o, ig []float32) {
	l.rowParams(y)
	last := l.tx - 1
	o, ig = o[:l.sw], ig[:l.sw]
	colT, colF := l.colT[:l.sw], l.colF[:l.sw]
	for x := range o {
		t0, f := int(colT[x]), colF[x]
		t1 := min(t0+1, last)
		o[x] = l.rowO[t0] + f*(l.rowO[t1]-l.rowO[t0])
		ig[x] = l.rowIG[t0] + f*(l.rowIG[t1]-l.rowIG[t0])
	}
}

// diffRow is row y of the difference between the frame (cur) and the
// background mapped into its lighting, clipped at the frame's black and
// white: out = cur − clamp((bg − o)·ig, black, white). Between two tile
// centres the map is linear in x, so each segment's map is two numbers per
// parameter, and the pixels (diffSegs) are plain vector work.
func (l *lighting) diffRow(y int, cur, bg, out []float32, black, white float32) {
	l.rowParams(y)
	for i, sg := range l.segs {
		t0, t1 := sg.t, min(sg.t+1, l.tx-1)
		do, di := l.rowO[t1]-l.rowO[t0], l.rowIG[t1]-l.rowIG[t0]
		l.lin[i] = linear{
			x0: int32(sg.x0), n: int32(sg.x1 - sg.x0),
			o0: l.rowO[t0] + sg.f0*do, do: do * sg.df,
			ig0: l.rowIG[t0] + sg.f0*di, di: di * sg.df,
		}
	}
	diffSegs(cur, bg, out, l.lin, black, white)
}

// linear is the lighting map along one segment of a row: at the
// segment's i-th pixel, o0 + i·do and ig0 + i·di.
type linear struct {
	x0, n   int32
	o0, do  float32
	ig0, di float32
}

// diffSegs computes diffRow's pixels, segment by segment; a vector version
// replaces it where the CPU has one, with the same float32 operations.
// cur, bg and out must have 8 values of slack after the row's last pixel:
// the vector version works in eights and lets a segment's last eight run
// into the next segment, which then overwrites them.
var diffSegs = diffSegsGo

func diffSegsGo(cur, bg, out []float32, segs []linear, black, white float32) {
	for _, sg := range segs {
		c, b, d := cur[sg.x0:sg.x0+sg.n], bg[sg.x0:sg.x0+sg.n], out[sg.x0:sg.x0+sg.n]
		for x, v := range c {
			i := float32(x)
			o, ig := sg.o0+i*sg.do, sg.ig0+i*sg.di
			p := (b[x] - o) * ig
			// comparisons, not min and max: those handle NaN and −0,
			// four instructions each
			if p < black {
				p = black
			}
			if p > white {
				p = white
			}
			d[x] = v - p
		}
	}
}

// segment is a run of columns between two tile centres (or beyond the
// first or last), where the lighting map is linear in x: at column x0 it
// is tile t's plus f0 of the way to tile t+1's, and each column adds df.
type segment struct {
	x0, x1, t int
	f0, df    float32
}

func segments(colT []int32, colF []float32, tiles, n int) []segment {
	// pinned: the weight is 0 or 1 (the borders, or a pixel right on a
	// centre), so the map is one tile's, constant; otherwise the weight
	// grows by tiles/n per pixel
	pinned := func(f float32) bool { return f == 0 || f == 1 }
	var segs []segment
	for x := 0; x < n; {
		end := x + 1
		for end < n && colT[end] == colT[x] && pinned(colF[end]) == pinned(colF[x]) &&
			(!pinned(colF[x]) || colF[end] == colF[x]) {
			end++
		}
		sg := segment{x0: x, x1: end, t: int(colT[x]), f0: colF[x]}
		if !pinned(colF[x]) {
			sg.df = float32(tiles) / float32(n)
		}
		segs = append(segs, sg)
		x = end
	}
	return segs
}

// moments are the sums of a least-squares fit of y ≈ gain·x + offset.
type moments struct{ n, sx, sy, sxx, sxy float64 }

func (m *moments) add(o moments) {
	m.n += o.n
	m.sx += o.sx
	m.sy += o.sy
	m.sxx += o.sxx
	m.sxy += o.sxy
}

// solve fits gain and offset, the gain shrunk towards prior with weight
// lambda (a variance: 0 is plain least squares), and returns the mean of x
// too.
func (m moments) solve(prior, lambda float64) (gain, offset, mean float64) {
	if m.n == 0 {
		return prior, 0, 0
	}
	mx, my := m.sx/m.n, m.sy/m.n
	vx := m.sxx/m.n - mx*mx
	cxy := m.sxy/m.n - mx*my
	if lambda == 0 && vx < 1 {
		// A flat frame has no contrast to fit a gain to: offset only.
		return 1, my - mx, mx
	}
	gain = math.Min(math.Max((cxy+lambda*prior)/(vx+lambda), 0.25), 4)
	return gain, my - gain*mx, mx
}

// rebaseScratch is rebase's working memory.
type rebaseScratch struct {
	near, tmp []uint8
	o, ig     []float32
}

func (r *rebaseScratch) init(sw, sh int) {
	r.near, r.tmp = make([]uint8, sw*sh), make([]uint8, sw*sh)
	r.o, r.ig = make([]float32, sw), make([]float32, sw)
}

// rebase takes the frame as the background after a light step, except
// near what was moving in the previous frame (moving, dilated once more
// to cover how far a thing moves in a frame): there the old background
// mapped into the new lighting stands in, so that the moving things are
// not baked in. Elsewhere the frame is right even where it changed: the
// lighting model failed there (a lamp's light clipping, a shadow), nothing
// moved. (Also keeping the old background where the frame changed a few
// pixels further from the moving things, to catch parts of them that
// matched the old light's background, did worse on the footage: the
// mapped background is less right there than the frame.) The tiles are
// re-solved without the limits first, to follow a lamp's light under the
// moving things as well as they can.
func (l *lighting) rebase(cur, bg []float32, moving []uint8, r *rebaseScratch, black, white float32) {
	if l.fitted {
		l.tiles(false)
	}
	sw, sh := l.sw, l.sh
	copy(r.near, moving)
	dilate3(r.near, r.tmp, sw, sh)
	for y := range sh {
		l.row(y, r.o, r.ig)
		c, b, nr := cur[y*sw:(y+1)*sw], bg[y*sw:(y+1)*sw], r.near[y*sw:(y+1)*sw]
		for x, v := range c {
			if nr[x] != 0 {
				v = min(max((b[x]-r.o[x])*r.ig[x], black), white)
			}
			b[x] = v
		}
	}
}
