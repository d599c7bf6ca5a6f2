// A model file that is no ONNX model, or is cut short, is refused in a user's words ("not an ONNX
// file", "incomplete (N of M bytes)"), never the protobuf reader's ("unsupported wire type 7"); and a
// file whose graph does not look like the family given is run with a warning (families.ts
// familyWarnings). Reads signatures only: no model runs.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { checkModelFile, FAMILY_CONVENTIONS, familyWarnings, rangeOp } from '../../src/model/families.js';
import { readOnnxSignatureFile } from '../../src/model/onnx-signature.js';
import { MODELS_DIR } from '../../src/model/manifest.js';
import { ISNET_FP32, writeBirefnetStyle, writeRmbgStyle } from '../helpers/family-graphs.js';

const ISNET_INT8 = path.join(MODELS_DIR, 'isnet-int8.onnx');
const PROTOBUF_WORDS = /wire type|runs past|varint|field|message/;

t.test('cut short: "incomplete (bytes present of bytes needed)", the needed count from the graph record', async (t) => {
  const dir = t.testdir();
  const whole = fs.readFileSync(ISNET_INT8);
  for (const keep of [4096, 1 << 20, whole.length >> 1]) {
    const cut = path.join(dir, `cut-${keep}.onnx`);
    fs.writeFileSync(cut, whole.subarray(0, keep));
    const err = t.throws(() => checkModelFile({ file: cut, family: 'isnet' })) as Error;
    const m = /^The model file .* is incomplete \(([\d,]+) of ([\d,]+) bytes, ending inside its graph\): copy or download it again$/.exec(err.message);
    t.ok(m, err.message);
    if (!m) continue;
    const [present, needed] = [Number(m[1]!.replace(/,/g, '')), Number(m[2]!.replace(/,/g, ''))];
    t.equal(present, keep, 'the bytes the file has');
    // The graph record's own length: the whole file but what follows the graph (opset_import, a few bytes).
    t.ok(needed > keep && needed <= whole.length && needed > whole.length - 256, `needs ${needed} of the whole file's ${whole.length}`);
    t.notMatch(err.message.replace(/^The model file \S+/, ''), PROTOBUF_WORDS, 'no protobuf words');
  }
  // One byte short: the graph is whole, the record after it (opset_import) is not; it needs the whole file.
  const short = path.join(dir, 'one-byte-short.onnx');
  fs.writeFileSync(short, whole.subarray(0, whole.length - 1));
  const n = (v: number) => v.toLocaleString('en-US');
  t.throws(() => checkModelFile({ file: short, family: 'isnet' }), {
    message: `The model file ${short} is incomplete (${n(whole.length - 1)} of ${n(whole.length)} bytes, ending inside its opset_import): copy or download it again`,
  });
});

t.test('not ONNX: a photo, a text file, an empty file, a zip', async (t) => {
  const dir = t.testdir();
  const write = (name: string, bytes: Uint8Array | string) => {
    const file = path.join(dir, name);
    fs.writeFileSync(file, bytes);
    return file;
  };
  const jpeg = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#345' } })
    .jpeg()
    .toBuffer();
  const cases: Array<[string, string]> = [
    [write('photo.onnx', jpeg), 'not an ONNX file (its bytes are not laid out as an ONNX model)'],
    [write('readme.onnx', 'this is not a model, it is a README\n'), 'not an ONNX file (its bytes are not laid out as an ONNX model)'],
    [write('empty.onnx', ''), 'not an ONNX file (it is empty)'],
    [write('model.zip.onnx', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x00, 0x00])), 'not an ONNX file (its bytes are not laid out as an ONNX model)'],
    // ir_version 8 and nothing else: ONNX's first record, but no graph.
    [write('no-graph.onnx', Buffer.from([0x08, 0x08])), 'not an ONNX file (it holds no graph)'],
  ];
  for (const [file, words] of cases) {
    t.throws(() => checkModelFile({ file, family: 'isnet' }), { message: `The model file ${file} is ${words}` }, path.basename(file));
  }
});

t.test("the mask's producer: Sigmoid behind a Cast in the bundled ISNet files", async (t) => {
  for (const file of [ISNET_INT8, ISNET_FP32]) {
    const facts = readOnnxSignatureFile(file, { nodes: true });
    t.equal(rangeOp(facts.producers, 'output'), 'Sigmoid', path.basename(file));
    t.equal(facts.producers.get('output')?.op, 'Cast');
  }
  const { producers, ...sig } = readOnnxSignatureFile(ISNET_INT8, { nodes: true });
  t.ok(producers.size > 1000, `${producers.size} values' producers`);
  t.same(readOnnxSignatureFile(ISNET_INT8), sig, 'the same signature either way');
});

t.test('an ISNet file given as birefnet: warned at start; given as isnet or rmbg: nothing to say', async (t) => {
  const asBirefnet = checkModelFile({ file: ISNET_INT8, family: 'birefnet' });
  t.equal(asBirefnet.warnings.length, 1);
  t.equal(
    asBirefnet.warnings[0],
    "the mask output 'output' comes out of a Sigmoid: it is a probability already, but family birefnet reads it as logits and applies a sigmoid again " +
      '(the mask would never fall below 0.5). An ISNet, U²-Net or RMBG-1.4 file? Give --model-family isnet, u2net or rmbg',
  );
  t.same(checkModelFile({ file: ISNET_INT8, family: 'isnet' }).warnings, []);
  t.same(checkModelFile({ file: ISNET_INT8, family: 'rmbg' }).warnings, []);
});

t.test("graphs in other families' conventions: no warning under their own family; logits read as isnet: warned", async (t) => {
  const dir = t.testdir();
  const birefnet = writeBirefnetStyle(dir);
  t.same(checkModelFile({ file: birefnet, family: 'birefnet' }).warnings, [], 'BiRefNet style: its logits come out of a Log');
  t.same(checkModelFile({ file: writeRmbgStyle(dir), family: 'rmbg' }).warnings, [], 'RMBG style: a min-max family, any monotonic output will do');
  const facts = readOnnxSignatureFile(birefnet, { nodes: true });
  t.equal(rangeOp(facts.producers, 'logits'), 'Log');
  t.same(
    familyWarnings(facts.producers, 'logits', FAMILY_CONVENTIONS.isnet, 'isnet'),
    [
      "the mask output 'logits' comes out of a Log, not a Sigmoid: family isnet reads it as a probability already, and logits would be cut to 0 and 1. " +
        'A BiRefNet or RMBG-2.0 file? Give --model-family birefnet',
    ],
    'logits read as a probability (a BiRefNet given as isnet)',
  );
  t.same(familyWarnings(facts.producers, 'input_image', FAMILY_CONVENTIONS.isnet, 'isnet'), [], 'a graph input: no producer, nothing said');
});
