// Package wakeword detects a wake phrase offline, in two ways that can run
// together.
//
// A trained head (Head; head.go, heads.go): a small network over a window
// of 16 speech embeddings (1.28 s) from a frozen frontend trained on real
// speech: openWakeWord's speech embedding (package speechembed). The head
// is trained per phrase from synthetic speech by `edgeagent wakeword
// train` (package train/wakeword): espeak-ng only, so that flite's and
// festival's voices, which stand in for people, measure it on speakers it
// never heard (`edgeagent wakeword eval`). The frontend runs only while
// the VAD hears sound, replaying a pre-roll when it opens, so a quiet room
// costs the VAD alone. The "hey robot" head ships in the binary (Builtin).
// Head files are versioned and checksummed; a damaged one is refused when
// it loads.
//
// Enrolled templates (by example; model.go, dtw.go, bank.go): the user
// records the phrase a few times, and the detector compares live audio
// with those takes: MFCCs (c1..c12), banded streaming dynamic time warping
// against every take, a score between the takes' own spread (1) and a take
// played backwards (0), per noise condition (the takes are re-mixed with
// the live background). It is speaker-dependent: it recognises the voice
// that enrolled, and very close phrases in that voice ("hey rowboat") are
// its typical false accepts. With a head of the same name, a template
// match counts only if the head's score rose a little in the last second.
//
// The detections are picked from the scores (threshold, peak, settle time,
// refractory period shared by every detector). docs/bench/wake-word.md has
// the measured rates; check the threshold on your own recordings with
// `edgeagent wakeword test`.
package wakeword
