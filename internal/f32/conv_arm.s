//go:build !purego

#include "textflag.h"

// Go's 32-bit arm assembler has no NEON mnemonics, so the NEON instructions
// are WORDs; each carries its GNU syntax, which `arm-linux-gnueabihf-as
// -mfpu=neon-vfpv4` turns into the same word. VFMA needs VFPv4 (Cortex-A7,
// A53, A72: every Raspberry Pi from the 2 on); cpu_arm.go checks for it.

// func conv4x8(m4, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)
//
// 4 rows × 8 columns per block: accumulators q0–q7 (row r in q2r, q2r+1)
// start at the bias; per (tap, q) the 8 weights go to q8–q9 and each row's
// a value is broadcast into q10 for two fused multiply-adds.
TEXT ·conv4x8(SB), NOSPLIT, $0-44
	MOVW m4+0(FP), R0
	MOVW a+12(FP), R1
	MOVW lda+16(FP), R2
	MOVW R2<<2, R2            // lda bytes
	MOVW nb+28(FP), R4
	MOVW R4<<2, R4            // b row stride bytes
	MOVW c+36(FP), R6

block:
	MOVW bias+32(FP), R3
	WORD $0xf423028f          // vld1.32 {d0-d3}, [r3]
	WORD $0xf2204150          // vorr q2, q0, q0
	WORD $0xf2226152          // vorr q3, q1, q1
	WORD $0xf2208150          // vorr q4, q0, q0
	WORD $0xf222a152          // vorr q5, q1, q1
	WORD $0xf220c150          // vorr q6, q0, q0
	WORD $0xf222e152          // vorr q7, q1, q1
	MOVW b+24(FP), R8
	MOVW R1, R7
	MOVW taps+4(FP), R12

tapLoop:
	MOVW R7, R9
	MOVW k+8(FP), R5
	ADD  R5<<2, R9, R5        // end of this tap's a values

qLoop:
	WORD $0xf4680284          // vld1.32 {d16-d19}, [r8], r4
	WORD $0xf4e94caf          // vld1.32 {d20[], d21[]}, [r9]
	WORD $0xf2040cf0          // vfma.f32 q0, q10, q8
	WORD $0xf2042cf2          // vfma.f32 q1, q10, q9
	ADD  R2, R9, R3
	WORD $0xf4e34caf          // vld1.32 {d20[], d21[]}, [r3]
	WORD $0xf2044cf0          // vfma.f32 q2, q10, q8
	WORD $0xf2046cf2          // vfma.f32 q3, q10, q9
	ADD  R2, R3, R3
	WORD $0xf4e34caf          // vld1.32 {d20[], d21[]}, [r3]
	WORD $0xf2048cf0          // vfma.f32 q4, q10, q8
	WORD $0xf204acf2          // vfma.f32 q5, q10, q9
	ADD  R2, R3, R3
	WORD $0xf4e34caf          // vld1.32 {d20[], d21[]}, [r3]
	WORD $0xf204ccf0          // vfma.f32 q6, q10, q8
	WORD $0xf204ecf2          // vfma.f32 q7, q10, q9
	ADD  $4, R9
	CMP  R9, R5
	BNE  qLoop
	MOVW tap+20(FP), R3
	ADD  R3<<2, R7, R7
	SUB.S $1, R12
	BNE  tapLoop

	MOVW ldc+40(FP), R3
	MOVW R3<<2, R3            // ldc bytes
	WORD $0xf4060283          // vst1.32 {d0-d3}, [r6], r3
	WORD $0xf4064283          // vst1.32 {d4-d7}, [r6], r3
	WORD $0xf4068283          // vst1.32 {d8-d11}, [r6], r3
	WORD $0xf406c283          // vst1.32 {d12-d15}, [r6], r3
	ADD  R2<<2, R1, R1
	SUB.S $1, R0
	BNE  block
	RET

// func conv1x8(m, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)
//
// One row at a time, the same per-element sequence as conv4x8.
TEXT ·conv1x8(SB), NOSPLIT, $0-44
	MOVW m+0(FP), R0
	MOVW a+12(FP), R1
	MOVW lda+16(FP), R2
	MOVW R2<<2, R2
	MOVW nb+28(FP), R4
	MOVW R4<<2, R4
	MOVW c+36(FP), R6

row:
	MOVW bias+32(FP), R3
	WORD $0xf423028f          // vld1.32 {d0-d3}, [r3]
	MOVW b+24(FP), R8
	MOVW R1, R7
	MOVW taps+4(FP), R12

tap1:
	MOVW R7, R9
	MOVW k+8(FP), R5
	ADD  R5<<2, R9, R5

q1:
	WORD $0xf4680284          // vld1.32 {d16-d19}, [r8], r4
	WORD $0xf4e94caf          // vld1.32 {d20[], d21[]}, [r9]
	WORD $0xf2040cf0          // vfma.f32 q0, q10, q8
	WORD $0xf2042cf2          // vfma.f32 q1, q10, q9
	ADD  $4, R9
	CMP  R9, R5
	BNE  q1
	MOVW tap+20(FP), R3
	ADD  R3<<2, R7, R7
	SUB.S $1, R12
	BNE  tap1

	MOVW ldc+40(FP), R3
	MOVW R3<<2, R3
	WORD $0xf4060283          // vst1.32 {d0-d3}, [r6], r3
	ADD  R2, R1
	SUB.S $1, R0
	BNE  row
	RET
