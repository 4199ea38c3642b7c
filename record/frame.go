package record

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
)

// shrink re-encodes a JPEG frame at most maxWidth wide (halving, thirding …
// by whole factors, averaging each block) at quality q. A 640×480 camera
// frame is ~45 KB; at 320×240 and quality 60 it is a fifth of that, which
// is what keeps a recording at 1 fps inside 60 MB per hour. A frame that is
// small enough already, or cannot be decoded, is kept as it is.
func shrink(data []byte, maxWidth, q int, buf *bytes.Buffer) ([]byte, error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return data, err
	}
	if maxWidth <= 0 || cfg.Width <= maxWidth {
		return data, nil
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return data, err
	}
	k := (cfg.Width + maxWidth - 1) / maxWidth
	var small image.Image
	switch src := img.(type) {
	case *image.YCbCr:
		small = downYCbCr(src, k)
	case *image.Gray:
		small = downGray(src, k)
	default:
		return data, errors.New("unexpected JPEG colour model")
	}
	buf.Reset()
	if err := jpeg.Encode(buf, small, &jpeg.Options{Quality: q}); err != nil {
		return data, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// downPlane averages k×k blocks of one plane.
func downPlane(dst []uint8, dstStride, dw, dh int, src []uint8, srcStride, sw, sh, k int) {
	for y := range dh {
		for x := range dw {
			sum, n := 0, 0
			for yy := y * k; yy < min((y+1)*k, sh); yy++ {
				row := src[yy*srcStride:]
				for xx := x * k; xx < min((x+1)*k, sw); xx++ {
					sum += int(row[xx])
					n++
				}
			}
			dst[y*dstStride+x] = uint8(sum / max(n, 1))
		}
	}
}

func downYCbCr(src *image.YCbCr, k int) *image.YCbCr {
	b := src.Bounds()
	w, h := b.Dx()/k, b.Dy()/k
	dst := image.NewYCbCr(image.Rect(0, 0, w, h), src.SubsampleRatio)
	downPlane(dst.Y, dst.YStride, w, h, src.Y, src.YStride, b.Dx(), b.Dy(), k)
	cw, ch := dst.CStride, len(dst.Cb)/max(dst.CStride, 1)
	scw, sch := src.CStride, len(src.Cb)/max(src.CStride, 1)
	downPlane(dst.Cb, dst.CStride, cw, ch, src.Cb, src.CStride, scw, sch, k)
	downPlane(dst.Cr, dst.CStride, cw, ch, src.Cr, src.CStride, scw, sch, k)
	return dst
}

func downGray(src *image.Gray, k int) *image.Gray {
	b := src.Bounds()
	w, h := b.Dx()/k, b.Dy()/k
	dst := image.NewGray(image.Rect(0, 0, w, h))
	downPlane(dst.Pix, dst.Stride, w, h, src.Pix, src.Stride, b.Dx(), b.Dy(), k)
	return dst
}
