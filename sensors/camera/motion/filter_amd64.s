//go:build !purego

#include "textflag.h"

// func vblurThresholdAVX2(r0, r1, r2, r3, r4 *float32, out *uint8, blocks int, k *[4]float32, lut *[256]uint64) int
//
// For 8·blocks pixels: e = k0·(r0+r4) + k1·(r1+r3) + k2·r2, in the same
// order of operations as the Go code (so the same float32 results), and
// out = |e| > thr (k[3]) as bytes 0/1, eight at a time through the 8-bit
// compare mask and a table. Returns how many were set.
TEXT ·vblurThresholdAVX2(SB), NOSPLIT, $0-80
	MOVQ r0+0(FP), AX
	MOVQ r1+8(FP), BX
	MOVQ r2+16(FP), CX
	MOVQ r3+24(FP), DX
	MOVQ r4+32(FP), SI
	MOVQ out+40(FP), DI
	MOVQ blocks+48(FP), R8
	MOVQ k+56(FP), R9
	MOVQ lut+64(FP), R10
	VBROADCASTSS 0(R9), Y10
	VBROADCASTSS 4(R9), Y11
	VBROADCASTSS 8(R9), Y12
	VBROADCASTSS 12(R9), Y13
	VPCMPEQD     Y14, Y14, Y14
	VPSRLD       $1, Y14, Y14 // 0x7FFFFFFF: clears the sign
	XORQ         R11, R11     // count
	XORQ         R12, R12     // offset into the rows, bytes

loop:
	TESTQ     R8, R8
	JZ        done
	VMOVUPS   (AX)(R12*1), Y0
	VADDPS    (SI)(R12*1), Y0, Y0
	VMULPS    Y10, Y0, Y0
	VMOVUPS   (BX)(R12*1), Y1
	VADDPS    (DX)(R12*1), Y1, Y1
	VMULPS    Y11, Y1, Y1
	VADDPS    Y1, Y0, Y0
	VMULPS    (CX)(R12*1), Y12, Y2
	VADDPS    Y2, Y0, Y0
	VANDPS    Y14, Y0, Y0
	VCMPPS    $0x1E, Y13, Y0, Y0 // |e| > thr (GT_OQ)
	VMOVMSKPS Y0, R14
	POPCNTQ   R14, R15
	ADDQ      R15, R11
	MOVQ      (R10)(R14*8), R15
	MOVQ      R15, (DI)
	ADDQ      $32, R12
	ADDQ      $8, DI
	DECQ      R8
	JMP       loop

done:
	VZEROUPPER
	MOVQ R11, ret+72(FP)
	RET
