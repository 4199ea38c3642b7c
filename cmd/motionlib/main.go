// Command motionlib is the motion detector as a C shared library, so that
// scripts/motion_vs_frigate.py can run it and Frigate's Python detector
// side by side in one process, on the very same decoded frames:
//
//	go build -buildmode=c-shared -o libmotion.so ./cmd/motionlib
//
// Its C API: motion_new() returns a handle for a detector with the default
// settings (compensate: 0 turns the lighting compensation off);
// motion_detect(handle, luma, stride, width, height, boxes, max_boxes)
// runs one frame, writes up to max_boxes boxes as x0,y0,x1,y1 (int32) and
// returns their count in the low 16 bits, with bit 16 set for motion and
// bit 17 while calibrating; motion_free(handle) drops the detector.
package main

// #include <stdint.h>
import "C"

import (
	"sync"
	"unsafe"

	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

var (
	mu        sync.Mutex
	detectors = map[C.int]*motion.Detector{}
	next      C.int
)

//export motion_new
func motion_new(compensate C.int) C.int {
	cfg := motion.DefaultConfig()
	cfg.CompensateLighting = compensate != 0
	d, err := motion.New(cfg)
	if err != nil {
		return -1 // cannot happen: the defaults are valid
	}
	mu.Lock()
	defer mu.Unlock()
	next++
	detectors[next] = d
	return next
}

//export motion_free
func motion_free(h C.int) {
	mu.Lock()
	defer mu.Unlock()
	delete(detectors, h)
}

//export motion_detect
func motion_detect(h C.int, luma *C.uint8_t, stride, width, height C.int, boxes *C.int32_t, maxBoxes C.int) C.int {
	mu.Lock()
	d := detectors[h]
	mu.Unlock()
	if d == nil || luma == nil || width <= 0 || height <= 0 || stride < width {
		return -1
	}
	// the caller's buffer, read in place: Detect keeps no reference
	y := unsafe.Slice((*byte)(unsafe.Pointer(luma)), int(stride)*int(height-1)+int(width))
	r := d.Detect(y, int(stride), int(width), int(height))
	n := min(len(r.Boxes), int(maxBoxes))
	if n > 0 {
		out := unsafe.Slice((*int32)(unsafe.Pointer(boxes)), 4*n)
		for i, b := range r.Boxes[:n] {
			out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = int32(b.Min.X), int32(b.Min.Y), int32(b.Max.X), int32(b.Max.Y)
		}
	}
	ret := n
	if r.Motion {
		ret |= 1 << 16
	}
	if r.Calibrating {
		ret |= 1 << 17
	}
	return C.int(ret)
}

func main() {}
