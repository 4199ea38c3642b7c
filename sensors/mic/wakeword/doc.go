// Package wakeword detects a wake phrase offline with a trained head
// (Head; head.go, heads.go): a small network over a window of 16 speech
// embeddings (1.28 s) from a frozen frontend trained on real speech:
// openWakeWord's speech embedding (package speechembed). The head is
// trained per phrase from synthetic speech by `edgeagent wakeword train`
// (package train/wakeword): espeak-ng only, so that flite's and festival's
// voices, which stand in for people, measure it on speakers it never heard
// (`edgeagent wakeword eval`). The frontend runs only while the VAD hears
// sound, replaying a pre-roll when it opens, so a quiet room costs the VAD
// alone. The "hey robot" head ships in the binary (Builtin). Head files
// are versioned and checksummed; a damaged one is refused when it loads.
//
// The detections are picked from the scores (threshold, refractory
// period). docs/bench/wake-word.md has the measured rates; check the
// threshold on your own recordings with `edgeagent wakeword test`.
package wakeword
