//go:build !purego

#include "textflag.h"

// func pairSumsAVX2(dst *uint16, src *byte, stride, rows, blocks int)
//
// For each of blocks blocks of 32 bytes along a row, sums every pair of
// adjacent pixels over rows rows (stride bytes apart) into 16 uint16 in
// dst: VPMADDUBSW with bytes of 1 adds each pair, VPADDW adds the rows.
TEXT ·pairSumsAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ stride+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ blocks+32(FP), R9
	VPCMPEQB Y15, Y15, Y15
	VPABSB   Y15, Y15 // bytes of 1
	MOVQ     R8, R12
	IMULQ    DX, R12 // rows·stride: the same block of the next span

block:
	TESTQ R9, R9
	JZ    done
	VPXOR Y0, Y0, Y0
	MOVQ  SI, AX
	MOVQ  R8, CX

row:
	PREFETCHT0 (AX)(R12*1)
	VMOVDQU    (AX), Y1
	VPMADDUBSW Y15, Y1, Y1
	VPADDW     Y1, Y0, Y0
	ADDQ       DX, AX
	DECQ       CX
	JNZ        row

	VMOVDQU Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    R9
	JMP     block

done:
	VZEROUPPER
	RET
