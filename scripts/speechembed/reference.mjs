// Reference outputs of openWakeWord's frontend, computed by onnxruntime from
// the two ONNX files, for the Go equivalence test (sensors/mic/speechembed).
// Run through ../speechembed-reference.sh, which installs the pinned
// onnxruntime-node and passes the model directory.
//
//   node reference.mjs MODELDIR fixture CLIP.wav OUT.ref   write a fixture
//   node reference.mjs MODELDIR bench SECONDS               time one hop
//   node reference.mjs MODELDIR head HEAD.onnx CLIP.wav...  a pretrained head
//       on Go's embeddings (CLIP.emb) and on onnxruntime's
//
// The hop is the one sensors/mic/speechembed implements (openWakeWord's
// streaming path): hop k (k = 1, 2, ...) feeds melspectrogram.onnx the 1760
// samples that end at sample 1280k (zeros before the clip), which gives 8
// frames; each is mapped x/10 + 2. From hop 10 on, the 76 frames that end at
// frame 8k go through embedding_model.onnx and give 96 values.
//
// A fixture file is little-endian: uint32 frames, uint32 embeddings, then
// frames×32 float32 features and embeddings×96 float32 values.
import fs from 'node:fs';
import path from 'node:path';
import ort from 'onnxruntime-node';

const HOP = 1280, CONTEXT = 480, FRAMES = 8, WINDOW = 76, MELS = 32, DIM = 96, FIRST = 10;

function readWav(file) {
  const b = fs.readFileSync(file);
  if (b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file}: not a WAV file`);
  let off = 12, fmt = null;
  while (off + 8 <= b.length) {
    const id = b.toString('ascii', off, off + 4), size = b.readUInt32LE(off + 4);
    if (id === 'fmt ') fmt = { channels: b.readUInt16LE(off + 10), rate: b.readUInt32LE(off + 12), bits: b.readUInt16LE(off + 22) };
    if (id === 'data') {
      if (!fmt || fmt.channels !== 1 || fmt.rate !== 16000 || fmt.bits !== 16) throw new Error(`${file}: want 16 kHz mono 16-bit`);
      const n = size / 2, out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = b.readInt16LE(off + 8 + 2 * i);
      return out;
    }
    off += 8 + size + (size & 1);
  }
  throw new Error(`${file}: no data chunk`);
}

async function sessions(dir) {
  const opts = { intraOpNumThreads: 1, interOpNumThreads: 1, executionMode: 'sequential' };
  return {
    mel: await ort.InferenceSession.create(path.join(dir, 'melspectrogram.onnx'), opts),
    emb: await ort.InferenceSession.create(path.join(dir, 'embedding_model.onnx'), opts),
  };
}

async function melHop(s, samples, k) {
  const x = new Float32Array(HOP + CONTEXT);
  const start = HOP * k - x.length;
  for (let i = 0; i < x.length; i++) x[i] = start + i >= 0 ? samples[start + i] : 0;
  const out = await s.mel.run({ [s.mel.inputNames[0]]: new ort.Tensor('float32', x, [1, x.length]) });
  const d = out[s.mel.outputNames[0]].data;
  if (d.length !== FRAMES * MELS) throw new Error(`mel gave ${d.length} values, want ${FRAMES * MELS}`);
  return Float32Array.from(d, (v) => v / 10 + 2);
}

async function embed(s, feats, endFrame) {
  const w = feats.slice((endFrame - WINDOW) * MELS, endFrame * MELS);
  const out = await s.emb.run({ [s.emb.inputNames[0]]: new ort.Tensor('float32', w, [1, WINDOW, MELS, 1]) });
  return out[s.emb.outputNames[0]].data;
}

async function fixture(dir, clip, outFile) {
  const s = await sessions(dir), samples = readWav(clip);
  const hops = Math.floor(samples.length / HOP);
  const feats = new Float32Array(hops * FRAMES * MELS);
  const embs = [];
  for (let k = 1; k <= hops; k++) {
    feats.set(await melHop(s, samples, k), (k - 1) * FRAMES * MELS);
    if (k >= FIRST) embs.push(await embed(s, feats, k * FRAMES));
  }
  const head = Buffer.alloc(8);
  head.writeUInt32LE(hops * FRAMES, 0);
  head.writeUInt32LE(embs.length, 4);
  const body = new Float32Array(feats.length + embs.length * DIM);
  body.set(feats);
  embs.forEach((e, i) => body.set(e, feats.length + i * DIM));
  fs.writeFileSync(outFile, Buffer.concat([head, Buffer.from(body.buffer)]));
  console.log(`${outFile}: ${hops * FRAMES} frames, ${embs.length} embeddings`);
}

// embeddings is onnxruntime's embeddings of a whole clip, one per hop from
// hop FIRST on.
async function embeddings(s, samples) {
  const hops = Math.floor(samples.length / HOP);
  const feats = new Float32Array(hops * FRAMES * MELS), out = [];
  for (let k = 1; k <= hops; k++) {
    feats.set(await melHop(s, samples, k), (k - 1) * FRAMES * MELS);
    if (k >= FIRST) out.push(Float32Array.from(await embed(s, feats, k * FRAMES)));
  }
  return out;
}

function readEmb(file) {
  const b = fs.readFileSync(file), n = b.readUInt32LE(0), out = [];
  for (let i = 0; i < n; i++) out.push(new Float32Array(b.buffer.slice(b.byteOffset + 4 + i * DIM * 4, b.byteOffset + 4 + (i + 1) * DIM * 4)));
  return out;
}

// headScore is a head's highest score over every window of 16 embeddings.
async function headScore(head, embs) {
  let best = 0;
  for (let i = 0; i + 16 <= embs.length; i++) {
    const x = new Float32Array(16 * DIM);
    for (let j = 0; j < 16; j++) x.set(embs[i + j], j * DIM);
    const out = await head.run({ [head.inputNames[0]]: new ort.Tensor('float32', x, [1, 16, DIM]) });
    best = Math.max(best, out[head.outputNames[0]].data[0]);
  }
  return best;
}

// headCheck runs a pretrained openWakeWord head on each clip's embeddings
// from Go (CLIP.emb, written by embedwav) and from onnxruntime, and prints
// both highest scores and the largest difference between the embeddings.
async function headCheck(dir, headFile, clips) {
  const s = await sessions(dir);
  const head = await ort.InferenceSession.create(headFile, { intraOpNumThreads: 1, interOpNumThreads: 1 });
  console.log('clip\tgo_score\tort_score\tmax_abs_diff');
  for (const clip of clips) {
    const ref = await embeddings(s, readWav(clip)), got = readEmb(clip.replace(/\.wav$/, '.emb'));
    if (ref.length !== got.length) throw new Error(`${clip}: ${got.length} Go embeddings, onnxruntime ${ref.length}`);
    let diff = 0;
    ref.forEach((e, i) => e.forEach((v, j) => { diff = Math.max(diff, Math.abs(v - got[i][j])); }));
    const g = await headScore(head, got), o = await headScore(head, ref);
    console.log(`${path.basename(clip, '.wav')}\t${g.toFixed(4)}\t${o.toFixed(4)}\t${diff.toExponential(1)}`);
  }
}

// bench times one hop (mel of 1760 samples + one embedding), single-threaded,
// over SECONDS of a deterministic noisy tone, after a warm-up: wall time and
// the process's CPU time (the fair figure on a shared machine).
async function bench(dir, seconds) {
  const s = await sessions(dir);
  const n = Math.round(seconds * 16000), samples = new Float32Array(n);
  let seed = 1;
  for (let i = 0; i < n; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    samples[i] = 3000 * Math.sin(i * 0.07) + (seed / 2147483648 - 0.5) * 2000;
  }
  const hops = Math.floor(n / HOP), feats = new Float32Array(hops * FRAMES * MELS);
  let t0 = 0n, c0 = null, timed = 0;
  for (let k = 1; k <= hops; k++) {
    if (k === FIRST + 5) { t0 = process.hrtime.bigint(); c0 = process.cpuUsage(); timed = 0; }
    feats.set(await melHop(s, samples, k), (k - 1) * FRAMES * MELS);
    if (k >= FIRST) await embed(s, feats, k * FRAMES);
    timed++;
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6 / timed;
  const cpu = process.cpuUsage(c0), cpuMs = (cpu.user + cpu.system) / 1e3 / timed;
  console.log(`onnxruntime-node ${ort.env.versions.common}: ${ms.toFixed(3)} ms/hop wall (rtf ${(ms / 80).toFixed(4)}), ` +
    `${cpuMs.toFixed(3)} ms/hop CPU (cpu-rtf ${(cpuMs / 80).toFixed(4)}), ${timed} hops, 1 thread`);
}

const [dir, cmd, ...rest] = process.argv.slice(2);
if (cmd === 'fixture' && rest.length === 2) await fixture(dir, rest[0], rest[1]);
else if (cmd === 'bench' && rest.length === 1) await bench(dir, Number(rest[0]));
else if (cmd === 'head' && rest.length >= 2) await headCheck(dir, rest[0], rest.slice(1));
else { console.error('usage: reference.mjs MODELDIR fixture CLIP.wav OUT.ref | bench SECONDS | head HEAD.onnx CLIP.wav...'); process.exit(2); }
