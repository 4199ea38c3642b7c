package f32

import "sync/atomic"

// kernel names the kernel the CPU gets; set by the architecture's init.
var kernel = "go"

var generic atomic.Bool

// Kernel names the kernel Conv uses now: "go", "avx2+fma", "neon" (arm64)
// or "neon32" (32-bit arm with NEON and VFPv4).
func Kernel() string {
	if generic.Load() {
		return "go"
	}
	return kernel
}

// SetGeneric makes Conv use the portable Go kernel (true) or the assembly
// one where the CPU has it (false, the default). For benchmarks and tests
// that set the two side by side.
func SetGeneric(on bool) { generic.Store(on) }
