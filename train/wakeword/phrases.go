package wakeword

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

func itoa(i int) string { return strconv.Itoa(i) }

var validPhrase = regexp.MustCompile(`^[a-z]+( [a-z]+){0,4}$`)

// normPhrase lower-cases and checks a wake phrase: 1–5 words of letters,
// which is what espeak-ng reads the same way every time.
func normPhrase(p string) (string, error) {
	p = strings.Join(strings.Fields(strings.ToLower(p)), " ")
	if !validPhrase.MatchString(p) || len(p) > 60 {
		return "", fmt.Errorf("wake phrase %q: use 1 to 5 words of letters a–z", p)
	}
	return p, nil
}

// Name is the wake word name for a phrase: hey robot → hey_robot.
func Name(phrase string) string { return strings.ReplaceAll(phrase, " ", "_") }

// Confusables are phrases that sound close to the wake phrase and must not
// wake the robot. They are generated, not listed, so that any phrase gets
// them: another first word ("okay robot", "the robot"), one word with a
// vowel or a consonant changed ("hey rowboat", "hey lobot"), and the words
// in another order. Partial phrases are separate (Partials).
func Confusables(phrase string) []string {
	w := strings.Fields(phrase)
	seen := map[string]bool{phrase: true}
	var out []string
	add := func(ws []string) {
		s := strings.Join(ws, " ")
		if !seen[s] && validPhrase.MatchString(s) {
			seen[s] = true
			out = append(out, s)
		}
	}
	if len(w) > 1 {
		for _, f := range firstWords {
			add(append([]string{f}, w[1:]...))
		}
		rev := slices.Clone(w)
		slices.Reverse(rev)
		add(rev)
	}
	for i := range w {
		word, lead, keep := w[i], "", ""
		if i == 0 && len(w) > 1 {
			word, lead = word[1:], word[:1]
		}
		if i == len(w)-1 {
			// The phrase's last sound is where the detector decides; a
			// negative that differs only there ("hey robod") or only
			// after it ("hey robots") is the phrase until then, and as a
			// negative it would teach the model to hesitate on the
			// phrase itself.
			word, keep = word[:len(word)-1], word[len(word)-1:]
		}
		for _, m := range mutations(word) {
			c := slices.Clone(w)
			c[i] = lead + m + keep
			add(c)
		}
	}
	return out
}

// firstWords replace the first word of a multi-word phrase: greetings and
// articles are what people say before a noun all day. Rhymes of a short
// first word that differ only in its onset ("day robot", "may robot" for
// "hey robot") are left out on purpose: no detector can tell them apart
// in a noisy room, people rarely say them, and as negatives they taught
// the model to doubt the phrase itself. Mutations leave the first word's
// onset alone for the same reason.
var firstWords = []string{"okay", "hi", "the", "a", "hello", "he", "hey there", "oh", "yeah", "so"}

// Sound changes for mutations: vowels and consonants that espeak-ng (and
// people) confuse.
var (
	vowelSubs = map[string][]string{
		"a": {"e", "o", "u", "ay"}, "e": {"a", "i", "ee"}, "i": {"e", "ee", "a"}, "o": {"oa", "ow", "u", "a", "er"},
		"u": {"o", "oo", "a"}, "ey": {"ay", "i", "o"}, "oo": {"o", "u"}, "ee": {"i", "ay"},
	}
	consSubs = map[byte][]string{
		'b': {"p", "v", "d"}, 'p': {"b", "t"}, 'd': {"t", "b", "g"}, 't': {"d", "k", "p"}, 'k': {"g", "t"}, 'g': {"k", "d"},
		'r': {"l", "w"}, 'l': {"r", "w"}, 'm': {"n"}, 'n': {"m"}, 'v': {"f", "b"}, 'f': {"v", "th"}, 's': {"z", "sh"},
		'h': {"j", "w"}, 'j': {"h", "y", "ch"}, 'w': {"r", "v"}, 'c': {"g", "s"}, 'z': {"s"}, 'y': {"j"},
	}
)

// mutations changes one sound of word at a time.
func mutations(word string) []string {
	var out []string
	for i := 0; i < len(word); i++ {
		for _, vl := range []int{2, 1} { // two-letter vowels first
			if i+vl > len(word) {
				continue
			}
			for _, s := range vowelSubs[word[i:i+vl]] {
				out = append(out, word[:i]+s+word[i+vl:])
			}
		}
		for _, s := range consSubs[word[i]] {
			out = append(out, word[:i]+s+word[i+1:])
		}
	}
	return out
}

// Partials are pieces of the phrase: each word alone, every run of
// consecutive words short of the whole, and the phrase with its last
// syllable-ish cut ("hey robo"). The model must wait for the whole phrase.
func Partials(phrase string) []string {
	w := strings.Fields(phrase)
	var out []string
	for i := range w {
		for j := i + 1; j <= len(w); j++ {
			if i == 0 && j == len(w) {
				continue
			}
			out = append(out, strings.Join(w[i:j], " "))
		}
	}
	last := w[len(w)-1]
	if len(last) > 3 {
		cut := strings.Join(append(slices.Clone(w[:len(w)-1]), last[:len(last)*2/3]), " ")
		out = append(out, cut)
	}
	return out
}

// InContext puts the phrase's words in ordinary sentences ("every robot
// needs a charger" for "hey robot"): a room hears the words of the phrase
// far more often than the phrase, and the model must wait for all of it.
func InContext(phrase string) []string {
	var out []string
	for _, w := range strings.Fields(phrase) {
		if len(w) < 3 {
			continue
		}
		for _, t := range contextTemplates {
			out = append(out, fmt.Sprintf(t, w))
		}
	}
	return out
}

var contextTemplates = []string{
	"the %s is here", "where is my %s", "I like that %s", "a %s and a cat", "%s number one",
	"look at the %s over there", "is that a %s", "my %s is broken", "we saw a %s today", "give the %s to me",
	"that %s again", "every %s needs a charger",
}

// sentences and words make ordinary speech: commands a robot hears, and
// random word sequences for sounds the sentences lack.
var sentences = []string{
	"turn on the headlight", "what time is it", "move forward two meters", "stop right there",
	"the battery is almost empty", "please bring me the red cup", "is anybody in the kitchen",
	"open the garage door", "it is going to rain this afternoon", "play some music in the living room",
	"how warm is it outside", "the package arrived this morning", "can you hear me now",
	"set a timer for ten minutes", "I left my keys on the table", "the cat is sleeping on the sofa",
	"we need more milk and bread", "call me when you get home", "the meeting starts at nine",
	"look at the camera", "follow the black line on the floor", "turn left at the next corner",
	"this is a test of the speaker", "good morning everybody", "the door is locked",
	"where did I put my phone", "lower the volume please", "the garden needs water",
	"check the temperature in the basement", "go back to the charging station",
	"hello there how are you", "that robot over there is new", "rob bought a boat yesterday",
	"every robot needs a charger", "the road was busy today", "he robbed the bank in a movie",
	"hey can you help me", "okay let us go", "the robot vacuum is stuck again", "hey what are you doing",
}

var words = strings.Fields(`the a of to and in is it you that he was for on are with as I his they be at one
have this from or had by word but what some we can out other were all there when up use your how said an each
she which do their time if will way about many then them write would like so these her long make thing see him
two has look more day could go come did number sound no most people my over know water than call first who may
down side been now find any new work part take get place made live where after back little only round man year
came show every good me give our under name very through just form sentence great think say help low line differ
turn cause much mean before move right boy old too same tell does set three want air well also play small end put
home read hand port large spell add even land here must big high such follow act why ask men change went light
kind off need house picture try us again animal point mother world near build self earth father head stand own
page should country found answer school grow study still learn plant cover food sun four between state keep eye
never last let thought city tree cross farm hard start might story saw far sea draw left late run while press
close night real life few north open seem together next white children begin got walk example ease paper group
always music those both mark often letter until mile river car feet care second book carry took science eat room
friend began idea fish mountain stop once base hear horse cut sure watch color face wood main enough plain girl
usual young ready above ever red list though feel talk bird soon body dog family direct pose leave song measure
door product black short numeral class wind question happen complete ship area half rock order fire south problem
piece told knew pass since top whole king space heard best hour better true during hundred five remember step
early hold west ground interest reach fast verb sing listen six table travel less robin robe bot boat row hay ray`)

// ordinaryWords are words without the near-sounds at the end of words
// ("hay robe bot" is "hey robot" to any ear): training hears those strung
// together as hard negatives, but the speech that false accepts per hour
// are counted on is what people say, and they do not say that.
var ordinaryWords = words[:len(words)-7]

// speech makes one utterance of ordinary speech that does not contain the
// phrase. Training (heldOut false) never uses every third sentence, so the
// speech of validation and evaluation (heldOut true) is partly text the
// head has not heard; their random word strings are of ordinaryWords.
func speech(r *rand.Rand, phrase string, heldOut bool) string {
	for {
		var s string
		if r.IntN(2) == 0 {
			i := r.IntN(len(sentences))
			if !heldOut && i%3 == 2 {
				continue
			}
			s = sentences[i]
		} else {
			n := 3 + r.IntN(8)
			ws := make([]string, n)
			for i := range ws {
				if heldOut {
					ws[i] = pick(r, ordinaryWords)
				} else {
					ws[i] = pick(r, words)
				}
			}
			s = strings.Join(ws, " ")
		}
		if !strings.Contains(" "+strings.ToLower(s)+" ", " "+phrase+" ") {
			return s
		}
	}
}

// contextPieces are the two halves of a multi-word phrase that talk holds
// without the phrase: its tail after another word ("the robot", "table
// robot" for "hey robot") and its first word before another ("hey can").
// A phrase of one word has none: in any context it is the phrase.
func contextPieces(phrase string) (head, tail string, ok bool) {
	w := strings.Fields(phrase)
	if len(w) < 2 {
		return "", "", false
	}
	return w[0], strings.Join(w[1:], " "), true
}

// randomContext is one utterance of word-string talk with a piece of the
// phrase inside it: half of them hold the tail after a word of leads,
// half the head before a word of follows, with up to four random words on
// either side. The fixed in-context sentences (InContext) are a dozen
// frames a model can learn by heart; a room says the phrase's words after
// and before any word at all. leads and follows are the words that do not
// make the piece sound like the phrase (contextWords).
func randomContext(r *rand.Rand, phrase string, leads, follows []string) string {
	head, tail, _ := contextPieces(phrase)
	some := func() []string {
		ws := make([]string, r.IntN(5))
		for i := range ws {
			ws[i] = pick(r, words)
		}
		return ws
	}
	for {
		mid := []string{pick(r, leads), tail}
		if r.IntN(2) == 1 {
			mid = []string{head, pick(r, follows)}
		}
		s := strings.Join(slices.Concat(some(), mid, some()), " ")
		if !strings.Contains(" "+s+" ", " "+phrase+" ") {
			return s
		}
	}
}
