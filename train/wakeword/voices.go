package wakeword

import (
	"math/rand/v2"
	"slices"
	"strings"
)

// espeak-ng voices are an accent (a language file) plus a variant (a
// speaker: pitch range, formant shifts, breathiness, the Klatt
// synthesiser). Training draws from every English accent and a few other
// languages reading the English text (their vowels and consonants give
// the foreign accents real households have), and from every variant but
// the validation speakers, who choose the threshold.
var (
	accents = []string{"en-us", "en-gb", "en", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-us-nyc",
		"en-gb-scotland", "en-029", "nl", "af", "es", "pl", "de", "sv"}

	variants = []string{"m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "f1", "f2", "f3", "f4", "f5",
		"klatt", "klatt2", "klatt3", "klatt4", "Alex", "Andrea", "Andy", "anika", "Annie", "aunty", "belinda",
		"benjamin", "caleb", "david", "Denis", "ed", "edward", "Gene", "grandma", "grandpa", "Hugo", "iven",
		"iven3", "Jacky", "john", "Lee", "linda", "Marco", "max", "Michael", "Mike", "norbert", "paul", "pedro",
		"quincy", "rob", "robert", "RicishayMax", "shelby", "steph", "steph2", "travis", "Tweaky", "victor",
		"zac", "adam", "announcer", "boris"}

	// valVariants are never trained on: the threshold is chosen on them.
	valVariants = []string{"m4", "f5", "klatt4", "Mike", "aunty", "linda"}
	fitVariants = slices.DeleteFunc(slices.Clone(variants), func(v string) bool { return slices.Contains(valVariants, v) })
)

// Evaluation engines. flite's and festival's voices stand in for people:
// they are built from recordings of real speakers, with other
// synthesisers and prosody than espeak-ng's, and training never hears
// them (TestTrainingHearsOnlyESpeak). The 7 voices × 12 deliveries of
// "hey robot" are the 84 clips of issue #29.
var (
	fliteVoices    = []string{"kal", "kal16", "awb", "rms", "slt"}
	festivalVoices = []string{"ked_diphone", "cmu_us_slt_arctic_hts"}
)

// Engines besides espeak-ng (Voice.Engine).
const (
	engineFlite    = "flite"
	engineFestival = "festival"
)

// Voice is one synthesiser voice: an espeak-ng accent and variant, or,
// with Engine set, that engine's speaker Variant (Accent en-us: how
// espeak-ng's phonemes read the texts it says).
type Voice struct{ Accent, Variant, Engine string }

func (v Voice) String() string {
	if v.Engine != "" {
		return v.Engine + ":" + v.Variant
	}
	return v.Accent + "+" + v.Variant
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// fitVoice draws a voice to train on.
func fitVoice(r *rand.Rand) Voice { return Voice{pick(r, accents), pick(r, fitVariants), ""} }

// valVoice draws a validation speaker.
func valVoice(r *rand.Rand) Voice { return Voice{pick(r, accents), pick(r, valVariants), ""} }

// evalVoices are the held-out engines' voices, in report order.
func evalVoices() []Voice {
	var out []Voice
	for _, v := range fliteVoices {
		out = append(out, Voice{"en-us", v, engineFlite})
	}
	for _, v := range festivalVoices {
		out = append(out, Voice{"en-us", v, engineFestival})
	}
	return out
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
