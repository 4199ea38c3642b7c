package motion

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

type polygon struct {
	xs, ys   []float64
	relative bool // coordinates are fractions of the frame's width and height
}

// parsePolygon reads Frigate's mask syntax: "x1,y1,x2,y2,..." with at
// least three points.
func parsePolygon(s string) (polygon, error) {
	fields := strings.Split(s, ",")
	if len(fields) < 6 || len(fields)%2 != 0 {
		return polygon{}, errors.New("want x1,y1,x2,y2,x3,y3[,...] (at least three points)")
	}
	var p polygon
	p.relative = true
	for i, f := range fields {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v < 0 {
			return polygon{}, fmt.Errorf("coordinate %d is not a non-negative number", i+1)
		}
		if v > 1 {
			p.relative = false
		}
		if i%2 == 0 {
			p.xs = append(p.xs, v)
		} else {
			p.ys = append(p.ys, v)
		}
	}
	return p, nil
}

// contains is the even-odd rule.
func (p polygon) contains(x, y float64) bool {
	in := false
	n := len(p.xs)
	for i, j := 0, n-1; i < n; j, i = i, i+1 {
		xi, yi, xj, yj := p.xs[i], p.ys[i], p.xs[j], p.ys[j]
		if (yi > y) != (yj > y) && x < (xj-xi)*(y-yi)/(yj-yi)+xi {
			in = !in
		}
	}
	return in
}

// rasterize marks in mask (sw×sh) every downscaled pixel whose centre, in
// the w×h input frame, lies inside the polygon.
func rasterize(p polygon, w, h, sw, sh int, mask []uint8) {
	sx, sy := float64(w)/float64(sw), float64(h)/float64(sh)
	if p.relative {
		sx, sy = 1/float64(sw), 1/float64(sh)
	}
	for y := 0; y < sh; y++ {
		cy := (float64(y) + 0.5) * sy
		for x := 0; x < sw; x++ {
			if p.contains((float64(x)+0.5)*sx, cy) {
				mask[y*sw+x] = 1
			}
		}
	}
}
