package wwtrain

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// espeak-ng voices are an accent (a language file) plus a variant (a
// speaker: pitch range, formant shifts, breathiness, the Klatt
// synthesiser). Held-out voices are whole accents and whole variants that
// training never hears, so the report's recall on them says something
// about speakers the model has not met. They include every voice that
// scripts/gen-audio-corpus.sh uses as "unseen", so its benchmark corpus is
// held out too.
var (
	// Besides English accents, a few other languages' voices reading
	// the English text: their vowels ("o:" for "oU") and consonants give
	// the foreign accents real households have, which espeak-ng's English
	// voices alone lack.
	trainAccents = []string{"en-us", "en-gb", "en", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-us-nyc",
		"nl", "af", "es", "pl"}
	heldAccents = []string{"en-gb-scotland", "en-029"}

	trainVariants = []string{"m2", "m3", "m4", "m6", "m8", "f3", "f5", "klatt", "klatt2", "klatt4",
		"Alex", "Andrea", "Andy", "anika", "aunty", "belinda", "benjamin", "caleb", "david", "Denis",
		"ed", "Gene", "grandma", "grandpa", "Hugo", "iven", "iven3", "Jacky", "john", "Lee", "Marco",
		"max", "Michael", "Mike", "norbert", "paul", "pedro", "quincy", "rob", "robert", "RicishayMax",
		"shelby", "steph2", "travis", "Tweaky", "victor", "zac", "adam", "announcer", "boris"}
	heldVariants = []string{"m1", "m5", "m7", "f1", "f2", "f4", "Annie", "edward", "klatt3", "linda", "steph"}

	// valVariants are in the training list but never trained on: the
	// validation speakers that recipes are chosen on, so the held-out test
	// voices stay untouched by those choices. They stay in trainVariants
	// so the test draws (and their voices) are the same as before the
	// split; the test's "seen voices" therefore include them, about one
	// clip in ten.
	valVariants = []string{"m4", "f5", "klatt4", "Mike", "aunty"}
	fitVariants = slices.DeleteFunc(slices.Clone(trainVariants), func(v string) bool { return slices.Contains(valVariants, v) })
)

// Other engines' speakers. espeak-ng's voices, whatever the accent and
// variant, share one formant synthesiser and one prosody model: the model
// trained on them alone fires on none of 84 "hey robot"s by flite's and
// festival's voices (scripts/gen-audio-corpus.sh engines), most of them
// far below its threshold (docs/bench/wake-word.md, "Other engines"). flite (diphone and cluster-unit voices built from
// recordings of real speakers) adds speakers to train on; festival's
// voices are held out whole, as an engine the model never hears. The
// speaker of festival's slt voice is flite's slt: its group is a new
// engine, not a new person.
var (
	fliteTrain    = []string{"kal16", "rms", "slt"}
	fliteVal      = []string{"awb"}
	festivalVoice = []string{"ked_diphone", "cmu_us_slt_arctic_hts"}
)

// Engines besides espeak-ng (Voice.Engine).
const (
	engineFlite    = "flite"
	engineFestival = "festival"
)

// Voice is one synthesiser voice: an espeak-ng accent and variant, or,
// with Engine set, that engine's speaker Variant, who reads English as
// Accent (en-us) does, so that sameSounding and the phone targets read
// the texts as espeak-ng's en-us.
type Voice struct{ Accent, Variant, Engine string }

func (v Voice) String() string {
	if v.Engine != "" {
		return v.Engine + ":" + v.Variant
	}
	return v.Accent + "+" + v.Variant
}

func otherVoice(r *rand.Rand, engine string, speakers []string) Voice {
	return Voice{"en-us", pick(r, speakers), engine}
}

// Group says how much of a voice training has heard: "seen" (accent and
// variant both trained on, new utterances), "new speaker" (held-out
// variant), "new accent" (held-out accent, any variant), "new engine"
// (festival's voices).
func (v Voice) Group() string {
	switch {
	case v.Engine == engineFestival:
		return GroupNewEngine
	case slices.Contains(heldAccents, v.Accent):
		return GroupNewAccent
	case slices.Contains(heldVariants, v.Variant):
		return GroupNewSpeaker
	}
	return GroupSeen
}

// Voice groups in reports.
const (
	GroupSeen       = "seen voices"
	GroupNewSpeaker = "held-out speakers"
	GroupNewAccent  = "held-out accents"
	GroupNewEngine  = "held-out engine (festival)"
)

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func trainVoice(r *rand.Rand) Voice { return Voice{pick(r, trainAccents), pick(r, trainVariants), ""} }

// fitVoice draws a voice the model trains on: a training accent and a
// training variant that is not a validation speaker.
func fitVoice(r *rand.Rand) Voice { return Voice{pick(r, trainAccents), pick(r, fitVariants), ""} }

// fitVoices is fitVoice with extra accents to train on (Config.ExtraAccents).
func fitVoices(extra []string) func(*rand.Rand) Voice {
	if len(extra) == 0 {
		return fitVoice
	}
	accents := append(slices.Clone(trainAccents), extra...)
	return func(r *rand.Rand) Voice { return Voice{pick(r, accents), pick(r, fitVariants), ""} }
}

// valVoice draws a validation speaker in a training accent.
func valVoice(r *rand.Rand) Voice { return Voice{pick(r, trainAccents), pick(r, valVariants), ""} }

// heldVoice draws a voice with at least one held-out half, alternating
// between new speakers and new accents.
func heldVoice(r *rand.Rand) Voice {
	if r.IntN(2) == 0 {
		return Voice{pick(r, trainAccents), pick(r, heldVariants), ""}
	}
	all := append(append([]string(nil), trainVariants...), heldVariants...)
	return Voice{pick(r, heldAccents), pick(r, all), ""}
}

// anyVoice draws from every voice, for negatives: other people talk in
// the room whoever says the wake word.
func anyVoice(r *rand.Rand) Voice {
	if r.IntN(3) == 0 {
		return heldVoice(r)
	}
	return trainVoice(r)
}

// Delivery is how one utterance is spoken.
type Delivery struct {
	Voice Voice
	Speed int // words per minute
	Pitch int // 0..99
	Amp   int // espeak amplitude 0..200
	Gap   int // extra pause between words, 10 ms units
	Text  string
}

func randomDelivery(r *rand.Rand, v Voice, text string) Delivery {
	return Delivery{Voice: v, Speed: 115 + r.IntN(101), Pitch: 15 + r.IntN(71), Amp: 60 + r.IntN(101),
		Gap: r.IntN(8), Text: text}
}

// key names a delivery in the synthesis cache.
func (d Delivery) key() string {
	return strings.Join([]string{d.Voice.String(), itoa(d.Speed), itoa(d.Pitch), itoa(d.Amp), itoa(d.Gap), d.Text}, "|")
}
