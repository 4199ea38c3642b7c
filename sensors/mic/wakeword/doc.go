// Package wakeword detects a wake phrase offline, without a downloaded
// model, in two ways that can run together.
//
// A trained model (Net; net.go): a small causal temporal convolutional
// network over log-mel frames (the same 26-band analysis as the MFCCs),
// trained per phrase from synthetic speech by package wwtrain
// (`edgeagent wakeword train`). It is speaker-independent among the
// synthesiser's voices: trained on dozens of espeak-ng voices, it is
// evaluated on voices it never heard. It is not independent of the
// synthesiser: it fires on none of flite's or festival's "hey robot"s
// (docs/bench/wake-word.md, "Other engines"), so a person's voice may need the
// enrolled templates below. It runs
// on every 10 ms hop, streaming and without allocation, and its score is
// calibrated so that 0.5 gives the false-accept rate it was trained for.
// The "hey robot" model ships in the binary (Builtin). Model files are
// versioned and checksummed; a damaged one is refused when it loads.
//
// Enrolled templates (by example; model.go, dtw.go, bank.go): the user
// records the phrase a few times, and the detector compares live audio
// with those takes: MFCCs (c1..c12), banded streaming dynamic time warping
// against every take, a score between the takes' own spread (1) and a take
// played backwards (0), per noise condition (the takes are re-mixed with
// the live background). A VAD keeps the matcher idle in silence. It is
// speaker-dependent: it recognises the voice that enrolled, and very close
// phrases in that voice ("hey rowboat") are its typical false accepts.
//
// Together (spotnet.go), the templates personalise the model: a template
// match of the model's phrase counts only if the model's score rose a
// little in the last second, so the owner's delivery is caught even where
// the model hesitates, while the templates' near misses are refused.
//
// A Picker turns scores into detections (threshold, peak, settle time,
// refractory period shared by every detector). docs/bench/wake-word.md has the
// measured rates; check the threshold on your own recordings with
// `edgeagent wakeword test`.
package wakeword
