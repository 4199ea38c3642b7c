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

// func diffSegsAVX2(cur, bg, out *float32, segs *linear, nseg int, black, white float32)
//
// diffSegsGo eight pixels at a time: per segment, o = o0 + i·do and
// ig = ig0 + i·di, p = clamp((bg − o)·ig, black, white), out = cur − p. A
// segment's last eight may run past its end (into the next segment, or
// the row's slack), as the caller allows.
TEXT ·diffSegsAVX2(SB), NOSPLIT, $0-48
	MOVQ         cur+0(FP), AX
	MOVQ         bg+8(FP), BX
	MOVQ         out+16(FP), CX
	MOVQ         segs+24(FP), DX
	MOVQ         nseg+32(FP), R8
	VBROADCASTSS black+40(FP), Y14
	VBROADCASTSS white+44(FP), Y15
	MOVL         $8, R9
	VMOVD        R9, X5
	VPBROADCASTD X5, Y5         // int32 8s
	VMOVDQU      ·iota8(SB), Y4 // int32 0..7

seg:
	TESTQ        R8, R8
	JZ           segdone
	MOVLQSX      0(DX), R10 // x0
	MOVLQSX      4(DX), R11 // n
	VBROADCASTSS 8(DX), Y8  // o0
	VBROADCASTSS 12(DX), Y9 // do
	VBROADCASTSS 16(DX), Y10 // ig0
	VBROADCASTSS 20(DX), Y11 // di
	SHLQ         $2, R10
	LEAQ         (AX)(R10*1), SI
	LEAQ         (BX)(R10*1), DI
	LEAQ         (CX)(R10*1), R12
	VMOVDQA      Y4, Y6 // i, as int32

pix:
	TESTQ     R11, R11
	JLE       next
	VCVTDQ2PS Y6, Y7
	VMULPS    Y9, Y7, Y0
	VADDPS    Y8, Y0, Y0 // o
	VMULPS    Y11, Y7, Y1
	VADDPS    Y10, Y1, Y1 // ig
	VMOVUPS   (DI), Y2
	VSUBPS    Y0, Y2, Y2 // bg − o
	VMULPS    Y1, Y2, Y2
	VMAXPS    Y14, Y2, Y2
	VMINPS    Y15, Y2, Y2
	VMOVUPS   (SI), Y3
	VSUBPS    Y2, Y3, Y3 // cur − p
	VMOVUPS   Y3, (R12)
	VPADDD    Y5, Y6, Y6
	ADDQ      $32, SI
	ADDQ      $32, DI
	ADDQ      $32, R12
	SUBQ      $8, R11
	JMP       pix

next:
	ADDQ $24, DX
	DECQ R8
	JMP  seg

segdone:
	VZEROUPPER
	RET

// func hblurAVX2(r, o *float32, blocks int, k *[3]float32)
//
// o[i] = k0·(r[i]+r[i+4]) + k1·(r[i+1]+r[i+3]) + k2·r[i+2] for 8·blocks
// values, as the Go loop computes it: r points two values before o's
// first pixel.
TEXT ·hblurAVX2(SB), NOSPLIT, $0-32
	MOVQ         r+0(FP), SI
	MOVQ         o+8(FP), DI
	MOVQ         blocks+16(FP), CX
	MOVQ         k+24(FP), R9
	VBROADCASTSS 0(R9), Y10
	VBROADCASTSS 4(R9), Y11
	VBROADCASTSS 8(R9), Y12

hloop:
	TESTQ   CX, CX
	JZ      hdone
	VMOVUPS (SI), Y0
	VADDPS  16(SI), Y0, Y0
	VMULPS  Y10, Y0, Y0
	VMOVUPS 4(SI), Y1
	VADDPS  12(SI), Y1, Y1
	VMULPS  Y11, Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMULPS  8(SI), Y12, Y2
	VADDPS  Y2, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JMP     hloop

hdone:
	VZEROUPPER
	RET

DATA ·iota8+0(SB)/4, $0
DATA ·iota8+4(SB)/4, $1
DATA ·iota8+8(SB)/4, $2
DATA ·iota8+12(SB)/4, $3
DATA ·iota8+16(SB)/4, $4
DATA ·iota8+20(SB)/4, $5
DATA ·iota8+24(SB)/4, $6
DATA ·iota8+28(SB)/4, $7
GLOBL ·iota8(SB), RODATA|NOPTR, $32

// func stretchAVX2(x *float32, blocks int, lo, k float32)
//
// x = (x − lo)·k for 8·blocks values.
TEXT ·stretchAVX2(SB), NOSPLIT, $0-24
	MOVQ         x+0(FP), DI
	MOVQ         blocks+8(FP), CX
	VBROADCASTSS lo+16(FP), Y10
	VBROADCASTSS k+20(FP), Y11

sloop:
	TESTQ   CX, CX
	JZ      sdone
	VMOVUPS (DI), Y0
	VSUBPS  Y10, Y0, Y0
	VMULPS  Y11, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	DECQ    CX
	JMP     sloop

sdone:
	VZEROUPPER
	RET

// func blendAVX2(bg, cur *float32, blocks int, alpha float32)
//
// bg += alpha·(cur − bg) for 8·blocks values.
TEXT ·blendAVX2(SB), NOSPLIT, $0-28
	MOVQ         bg+0(FP), DI
	MOVQ         cur+8(FP), SI
	MOVQ         blocks+16(FP), CX
	VBROADCASTSS alpha+24(FP), Y11

bloop:
	TESTQ   CX, CX
	JZ      bdone
	VMOVUPS (DI), Y0
	VMOVUPS (SI), Y1
	VSUBPS  Y0, Y1, Y1
	VMULPS  Y11, Y1, Y1
	VADDPS  Y1, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, DI
	ADDQ    $32, SI
	DECQ    CX
	JMP     bloop

bdone:
	VZEROUPPER
	RET
