//go:build !purego

package f32

// hasAsm: Advanced SIMD (NEON) is part of every arm64 CPU.
const hasAsm = true

func init() { kernel = "neon" }
