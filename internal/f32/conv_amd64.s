//go:build !purego

#include "textflag.h"

// func conv4x24(m4, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)
//
// 4 rows × 24 columns per block, m4 blocks down the rows. Twelve Y
// accumulators start at the bias; per (tap, q) one 24-wide weight row is
// loaded and each row's a value broadcast into one FMA per 8 columns.
TEXT ·conv4x24(SB), NOSPLIT, $0-88
	MOVQ m4+0(FP), BX
	MOVQ a+24(FP), R13
	MOVQ lda+32(FP), R8
	SHLQ $2, R8                // R8 = lda in bytes
	LEAQ (R8)(R8*2), R9        // R9 = 3·lda bytes
	MOVQ tap+40(FP), R12
	SHLQ $2, R12               // R12 = tap in bytes
	MOVQ nb+56(FP), R11
	SHLQ $2, R11               // R11 = b row stride in bytes
	MOVQ bias+64(FP), AX
	MOVQ c+72(FP), R14
	MOVQ ldc+80(FP), R15
	SHLQ $2, R15               // R15 = ldc in bytes

block:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	VMOVAPS Y0, Y3
	VMOVAPS Y1, Y4
	VMOVAPS Y2, Y5
	VMOVAPS Y0, Y6
	VMOVAPS Y1, Y7
	VMOVAPS Y2, Y8
	VMOVAPS Y0, Y9
	VMOVAPS Y1, Y10
	VMOVAPS Y2, Y11
	MOVQ b+48(FP), DI
	MOVQ R13, R10
	MOVQ taps+8(FP), CX

tapLoop:
	MOVQ R10, SI
	MOVQ k+16(FP), DX

qLoop:
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VMOVUPS 64(DI), Y14
	VBROADCASTSS (SI), Y15
	VFMADD231PS Y12, Y15, Y0
	VFMADD231PS Y13, Y15, Y1
	VFMADD231PS Y14, Y15, Y2
	VBROADCASTSS (SI)(R8*1), Y15
	VFMADD231PS Y12, Y15, Y3
	VFMADD231PS Y13, Y15, Y4
	VFMADD231PS Y14, Y15, Y5
	VBROADCASTSS (SI)(R8*2), Y15
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VFMADD231PS Y14, Y15, Y8
	VBROADCASTSS (SI)(R9*1), Y15
	VFMADD231PS Y12, Y15, Y9
	VFMADD231PS Y13, Y15, Y10
	VFMADD231PS Y14, Y15, Y11
	ADDQ $4, SI
	ADDQ R11, DI
	DECQ DX
	JNZ  qLoop
	ADDQ R12, R10
	DECQ CX
	JNZ  tapLoop

	MOVQ R14, SI
	VMOVUPS Y0, (SI)
	VMOVUPS Y1, 32(SI)
	VMOVUPS Y2, 64(SI)
	ADDQ R15, SI
	VMOVUPS Y3, (SI)
	VMOVUPS Y4, 32(SI)
	VMOVUPS Y5, 64(SI)
	ADDQ R15, SI
	VMOVUPS Y6, (SI)
	VMOVUPS Y7, 32(SI)
	VMOVUPS Y8, 64(SI)
	ADDQ R15, SI
	VMOVUPS Y9, (SI)
	VMOVUPS Y10, 32(SI)
	VMOVUPS Y11, 64(SI)
	LEAQ (R13)(R8*4), R13
	LEAQ (R14)(R15*4), R14
	DECQ BX
	JNZ  block
	VZEROUPPER
	RET

// func conv1x24(m, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)
//
// One row at a time with the same per-element sequence as conv4x24, so a
// row's result does not depend on which of the two computed it.
TEXT ·conv1x24(SB), NOSPLIT, $0-88
	MOVQ m+0(FP), BX
	MOVQ a+24(FP), R13
	MOVQ lda+32(FP), R8
	SHLQ $2, R8
	MOVQ tap+40(FP), R12
	SHLQ $2, R12
	MOVQ nb+56(FP), R11
	SHLQ $2, R11
	MOVQ bias+64(FP), AX
	MOVQ c+72(FP), R14
	MOVQ ldc+80(FP), R15
	SHLQ $2, R15

row:
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS 64(AX), Y2
	MOVQ b+48(FP), DI
	MOVQ R13, R10
	MOVQ taps+8(FP), CX

tap1:
	MOVQ R10, SI
	MOVQ k+16(FP), DX

q1:
	VBROADCASTSS (SI), Y15
	VFMADD231PS (DI), Y15, Y0
	VFMADD231PS 32(DI), Y15, Y1
	VFMADD231PS 64(DI), Y15, Y2
	ADDQ $4, SI
	ADDQ R11, DI
	DECQ DX
	JNZ  q1
	ADDQ R12, R10
	DECQ CX
	JNZ  tap1

	VMOVUPS Y0, (R14)
	VMOVUPS Y1, 32(R14)
	VMOVUPS Y2, 64(R14)
	ADDQ R8, R13
	ADDQ R15, R14
	DECQ BX
	JNZ  row
	VZEROUPPER
	RET
