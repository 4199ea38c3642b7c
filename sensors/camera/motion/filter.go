package motion

// blur5 smooths p (w×h) in place with the separable binomial kernel
// [1 4 6 4 1]/16, a Gaussian of σ≈1 and radius 2 as in Frigate, repeating
// the border pixels. tmp must be as long as p.
func blur5(p, tmp []float32, w, h int) {
	n := w * h
	p, tmp = p[:n], tmp[:n]
	const a, b, c = 1.0 / 16, 4.0 / 16, 6.0 / 16
	// horizontal: p → tmp
	for y := 0; y < h; y++ {
		r := p[y*w : (y+1)*w]
		o := tmp[y*w : (y+1)*w]
		if w < 5 {
			for x := range o {
				o[x] = a*r[clampi(x-2, w)] + b*r[clampi(x-1, w)] + c*r[x] + b*r[clampi(x+1, w)] + a*r[clampi(x+2, w)]
			}
			continue
		}
		o[0] = a*r[0] + b*r[0] + c*r[0] + b*r[1] + a*r[2]
		o[1] = a*r[0] + b*r[0] + c*r[1] + b*r[2] + a*r[3]
		for x := 2; x < w-2; x++ {
			s := r[x-2 : x+3 : x+3]
			o[x] = a*(s[0]+s[4]) + b*(s[1]+s[3]) + c*s[2]
		}
		o[w-2] = a*r[w-4] + b*r[w-3] + c*r[w-2] + b*r[w-1] + a*r[w-1]
		o[w-1] = a*r[w-3] + b*r[w-2] + c*r[w-1] + b*r[w-1] + a*r[w-1]
	}
	// vertical: tmp → p, a row at a time so the inner loop runs along memory
	for y := 0; y < h; y++ {
		r0 := tmp[clampi(y-2, h)*w:][:w]
		r1 := tmp[clampi(y-1, h)*w:][:w]
		r2 := tmp[y*w:][:w]
		r3 := tmp[clampi(y+1, h)*w:][:w]
		r4 := tmp[clampi(y+2, h)*w:][:w]
		o := p[y*w:][:w]
		for x := range o {
			o[x] = a*(r0[x]+r4[x]) + b*(r1[x]+r3[x]) + c*r2[x]
		}
	}
}

func clampi(i, n int) int {
	if i < 0 {
		return 0
	}
	if i >= n {
		return n - 1
	}
	return i
}

// dilate3 replaces each pixel of bin (w×h, values 0 or 1) by the maximum
// of its 3×3 neighbourhood, which closes the gaps between the changed
// pixels of one moving thing so that it forms one region.
func dilate3(bin, tmp []uint8, w, h int) {
	n := w * h
	bin, tmp = bin[:n], tmp[:n]
	for y := 0; y < h; y++ {
		r := bin[y*w:][:w]
		o := tmp[y*w:][:w]
		for x := range o {
			v := r[x]
			if x > 0 {
				v |= r[x-1]
			}
			if x+1 < w {
				v |= r[x+1]
			}
			o[x] = v
		}
	}
	for y := 0; y < h; y++ {
		r1 := tmp[y*w:][:w]
		r0, r2 := r1, r1
		if y > 0 {
			r0 = tmp[(y-1)*w:][:w]
		}
		if y+1 < h {
			r2 = tmp[(y+1)*w:][:w]
		}
		o := bin[y*w:][:w]
		for x := range o {
			o[x] = r0[x] | r1[x] | r2[x]
		}
	}
}
