//go:build !purego

package motion

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func pairSumsAVX2(dst *uint16, src *byte, stride, rows, blocks int)

func init() {
	if cpu.X86.HasAVX2 {
		pairSums = func(dst []uint16, src []byte, stride, rows, blocks int) {
			// the bounds the assembly relies on
			_ = dst[16*blocks-1]
			_ = src[(rows-1)*stride+32*blocks-1]
			pairSumsAVX2(unsafe.SliceData(dst), unsafe.SliceData(src), stride, rows, blocks)
		}
	}
}
