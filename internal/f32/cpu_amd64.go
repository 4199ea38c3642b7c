//go:build !purego

package f32

import "golang.org/x/sys/cpu"

// hasAsm: the amd64 kernel needs AVX2 and FMA (Haswell, 2013, and later;
// every x86 Jetson or Pi alternative has them). Older CPUs use Go.
var hasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

func init() {
	if hasAsm {
		kernel = "avx2+fma"
	}
}
