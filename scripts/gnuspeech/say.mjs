// say.mjs — GnuSpeech, an articulatory synthesiser, as a co-process for the
// wake-word false-accept set (scripts/wakeword-fa.sh; workstation only,
// nothing of it ships). Fetch it first: scripts/fetch-gnuspeech.sh.
//
//   node scripts/gnuspeech/say.mjs PACKAGE_DIR
//
// Reads one request per line on stdin, tab-separated:
//
//   OUT.wav  VOICE  TRACT_CM  PITCH_ST  TEMPO  BREATHINESS  TEXT
//
// VOICE is one of GnuSpeech's voices (male, female, large_child,
// small_child), TRACT_CM its vocal tract length in cm (male 17.5,
// female 15), PITCH_ST a pitch offset in semitones, TEMPO a speed factor
// (1 = normal), BREATHINESS in %. Writes OUT.wav (44.1 kHz mono) and
// answers one line per request: "ok", or "err " and why.
import { readFileSync, writeFileSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { join } from 'node:path'

const dir = process.argv[2]
if (!dir) {
  console.error('usage: say.mjs PACKAGE_DIR (the unpacked @echogarden/gnuspeech-wasm package)')
  process.exit(2)
}
const { default: init } = await import(join(dir, 'wasm', 'gnuspeech.js'))
const m = await init()
const data = '/data/en'
const text = (p) => new TextDecoder().decode(m.FS.readFile(p))
const control = text(`${data}/trm_control_model.txt`)
const voices = {}
for (const v of ['male', 'female', 'large_child', 'small_child']) voices[v] = text(`${data}/voice_${v}.txt`)

// setting replaces "key = value" in a GnuSpeech configuration file; a key
// the file lacks is an error, so a new package version cannot silently
// ignore a parameter.
function setting(conf, key, value) {
  const re = new RegExp(`^${key}\\s*=.*$`, 'm')
  if (!re.test(conf)) throw new Error(`configuration has no ${key}`)
  return conf.replace(re, `${key} = ${value}`)
}

function cstring(s) {
  const b = new TextEncoder().encode(s)
  const p = m._malloc(b.length + 1)
  m.HEAPU8.set(b, p)
  m.HEAPU8[p + b.length] = 0
  return p
}

function say(out, voice, tract, pitch, tempo, breath, words) {
  if (!voices[voice]) throw new Error(`unknown voice ${voice}`)
  const nums = [tract, pitch, tempo, breath].map(Number)
  if (nums.some((x) => !Number.isFinite(x)) || nums[0] < 8 || nums[0] > 22 || nums[2] <= 0) {
    throw new Error('tract, pitch, tempo and breathiness must be numbers (tract 8-22 cm, tempo > 0)')
  }
  let v = setting(voices[voice], 'vocal_tract_length', nums[0])
  v = setting(v, 'breathiness', nums[3])
  m.FS.writeFile(`${data}/voice_custom.txt`, v)
  let c = setting(control, 'voice_name', 'custom')
  c = setting(c, 'tempo', nums[2])
  c = setting(c, 'pitch_offset', nums[1])
  m.FS.writeFile(`${data}/trm_control_model.txt`, c)
  const args = [words, '/out.wav', data, '/params.txt'].map(cstring)
  try {
    m._GnuSpeech_synthesizeToFile(...args, false)
  } finally {
    args.forEach((p) => m._free(p))
  }
  writeFileSync(out, m.FS.readFile('/out.wav'))
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity })
for await (const line of rl) {
  const f = line.split('\t')
  try {
    if (f.length !== 7) throw new Error(`want 7 tab-separated fields, got ${f.length}`)
    say(...f)
    process.stdout.write('ok\n')
  } catch (e) {
    process.stdout.write(`err ${String(e.message ?? e).replace(/\n/g, ' ')}\n`)
  }
}
