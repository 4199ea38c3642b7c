// Package wakeword detects a wake phrase by example, offline and without a
// downloaded model: the user records the phrase a few times (enrolment),
// and the detector compares live audio with those takes.
//
// Features are MFCCs (c1..c12, 25 ms frames every 10 ms, FFT from gonum);
// the comparison is banded dynamic time warping, streaming, against every
// take; the length-normalised distance is turned into a score between the
// takes' own spread (1) and a take played backwards (0), per noise
// condition (see bank.go for why); a threshold and a refractory period
// decide. A VAD keeps the matcher idle in silence.
//
// What to expect: this is a speaker-dependent detector. It recognises the
// voice that enrolled, saying the phrase roughly as enrolled; other voices
// mostly score far below the threshold, and very close phrases in the
// enrolled voice ("hey rowboat" for "hey robot") are its typical false
// accepts. docs/benchmarks.md has the measured rates on a synthetic corpus,
// which flatters them: a speech synthesiser repeats itself far more exactly
// than a person does. Check the threshold on recordings of your own with
// `edgeagent wakeword test`.
package wakeword
