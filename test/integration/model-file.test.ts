// A model file of the user's own: the bundled ISNet fp32 rewritten into BiRefNet's and
// U²-Net's conventions (test/helpers/family-graphs.ts) gives the bundled model's matte through the
// HTTP service, `cutout remove` and the library; a file run with the wrong conventions does not; a
// file that breaks its family's is refused before any worker starts. The photos are generated here.
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import t from 'tap';
import { createRemover } from '../../src/lib/remove.js';
import { createRemovalPool } from '../../src/pool/pool.js';
import { runRemoveCommand } from '../../src/cli/remove-command.js';
import { sha256 } from '../../src/model/assemble.js';
import { estimateMemory, formatMemoryEstimate } from '../../src/pool/memory-estimate.js';
import { syntheticFigure, syntheticPhoto } from '../helpers/core-fixtures.js';
import {
  ISNET_FP32,
  writeBirefnetStyle,
  writeFp16AsShipped,
  writeFp16IoStyle,
  writeNhwcStyle,
  writeRmbgStyle,
  writeSignatureGraph,
  writeU2netStyle,
} from '../helpers/family-graphs.js';
import { KEY, startTestServer } from '../helpers/server.js';
import { multipart, request } from '../helpers/http-client.js';
import type { PoolOptions } from '../../src/pool/pool-api.js';

// A figure the size of a DAVIS frame, 854×480: small enough for seconds per run of the fp32 model on two cores.
const photo = await syntheticFigure(854, 480);

/** The photo as DIR/figure.jpg, for `cutout remove`. */
function photoFileIn(dir: string): string {
  const file = path.join(dir, 'figure.jpg');
  fs.writeFileSync(file, photo);
  return file;
}
const base: PoolOptions = { workers: 1, device: 'cpu' };

/** The alpha plane of a result (an `alpha` result is grey; an RGBA one has it last). */
async function alphaOf(png: Uint8Array): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  if (info.channels === 1) return { data, width: info.width, height: info.height };
  const out = Buffer.alloc(info.width * info.height);
  for (let i = 0; i < out.length; i++) out[i] = data[i * info.channels + info.channels - 1]!;
  return { data: out, width: info.width, height: info.height };
}

/** Mean and largest |a - b| in alpha levels (0..255), and the share of pixels off by more than 2. */
function compare(a: Buffer, b: Buffer): { mean: number; max: number; over2: number } {
  let sum = 0;
  let max = 0;
  let over = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i]! - b[i]!);
    sum += d;
    if (d > max) max = d;
    if (d > 2) over++;
  }
  return { mean: sum / a.length, max, over2: over / a.length };
}

const fmt = (c: { mean: number; max: number; over2: number }) => `mean |Δ| ${c.mean.toFixed(4)}, max ${c.max}, ${(100 * c.over2).toFixed(3)}% over 2 levels`;

async function removeWith(opts: PoolOptions): Promise<Buffer> {
  const remover = await createRemover({ ...base, ...opts });
  try {
    const out = await remover.remove(photo, { channels: 'alpha' });
    return (await alphaOf(out.data)).data;
  } finally {
    await remover.close();
  }
}

t.test('graphs rewritten into other families give the bundled model its matte', async (t) => {
  const dir = t.testdir();
  const reference = await removeWith({ model: 'isnet-fp32' });
  const { width, height } = await sharp(photo).metadata();
  t.equal(reference.length, width! * height!, 'a full-size matte');
  const fg = reference.filter((v) => v >= 128).length / reference.length;
  t.ok(fg > 0.05 && fg < 0.6, `the figure is found (${(100 * fg).toFixed(1)}% foreground)`);

  await t.test('birefnet: ImageNet input, logits, the mask last of three outputs; through the HTTP service', async (t) => {
    const file = writeBirefnetStyle(dir);
    const pool = await createRemovalPool({ ...base, modelFile: file, modelFamily: 'birefnet' });
    t.teardown(() => pool.close());
    t.equal(pool.info?.model, 'birefnet-style.onnx');
    t.equal(pool.info?.modelFamily, 'birefnet');
    t.equal(pool.info?.modelSha256, sha256(fs.readFileSync(file)));
    t.equal(pool.info?.ownModelFile, true);
    // Its memory estimate is made from the file and its input, not from a bundled model's figures.
    t.same(pool.info?.modelFileSize, { name: 'birefnet-style.onnx', fileBytes: fs.statSync(file).size, inputWidth: 1024, inputHeight: 1024 });
    const s = await startTestServer(t, { pool });
    const health = await request(`${s.url}/healthz`);
    t.equal(health.status, 200);
    t.match(health.json(), { model: 'birefnet-style.onnx', model_family: 'birefnet', model_sha256: sha256(fs.readFileSync(file)) });
    t.notOk('model_license' in health.json(), 'no licence facts for a file of your own');
    t.match(
      formatMemoryEstimate(estimateMemory(pool.info!.modelFileSize, 1)),
      /\(birefnet-style\.onnx, estimated from its 1[67]\d MB file and 1024×1024 input; /,
      "the banner's memory line",
    );
    const { body, contentType } = multipart([
      { name: 'image_file', value: photo, filename: 'figure.jpg' },
      { name: 'size', value: 'full' },
      { name: 'channels', value: 'alpha' },
      { name: 'format', value: 'png' },
    ]);
    const res = await request(`${s.url}/v1.0/removebg`, { method: 'POST', headers: { 'content-type': contentType, 'x-api-key': KEY }, body });
    t.equal(res.status, 200, res.status === 200 ? 'removed' : res.text());
    t.equal(res.headers['content-type'], 'image/png');
    const alpha = await alphaOf(res.body);
    t.same([alpha.width, alpha.height], [width, height]);
    const c = compare(alpha.data, reference);
    t.ok(c.mean < 0.05 && c.max <= 3, `birefnet-style vs bundled: ${fmt(c)}`);
  });

  await t.test('the same file read with the wrong conventions gives another matte (the comparison can fail)', async (t) => {
    const file = path.join(dir, 'birefnet-style.onnx');
    // The probability output taken for logits: a sigmoid squeezes every alpha into 0.5..0.73.
    fs.writeFileSync(`${file}.json`, JSON.stringify({ family: 'birefnet', output: { name: 'output' } }));
    t.teardown(() => fs.rmSync(`${file}.json`));
    const wrong = await removeWith({ modelFile: file });
    const c = compare(wrong, reference);
    t.ok(c.mean > 50, `a probability read as logits: ${fmt(c)}`);
  });

  await t.test('rmbg: mean 0.5 std 1.0 folded in, the first output squeezed and min-max normalised; the library', async (t) => {
    const c = compare(await removeWith({ modelFile: writeRmbgStyle(dir), modelFamily: 'rmbg' }), reference);
    t.ok(c.mean < 0.05 && c.max <= 3, `rmbg-style vs bundled: ${fmt(c)}`);
  });

  await t.test('nhwc: a channels-last input [1, 1024, 1024, 3] transposed inside the graph, through a descriptor with layout nhwc', async (t) => {
    const file = writeNhwcStyle(dir);
    fs.writeFileSync(`${file}.json`, JSON.stringify({ family: 'isnet', input: { name: 'image', layout: 'nhwc' } }));
    const c = compare(await removeWith({ modelFile: file }), reference);
    t.ok(c.mean < 0.05 && c.max <= 3, `nhwc-style vs bundled: ${fmt(c)}`);
    // The same file read as NCHW (the family's default) is refused at start, naming the dimensions.
    const plain = path.join(dir, 'nchw.json');
    fs.writeFileSync(plain, JSON.stringify({ family: 'isnet' }));
    await t.rejects(createRemover({ ...base, modelFile: file, modelDescriptor: plain }), {
      name: 'ModelFileError',
      message: /input 'image' has 1024 channels in dimension 1 \[1, 1024, 1024, 3\], expected 3 \(NCHW RGB\)/,
    });
    // And an NCHW file said to be NHWC.
    const said = path.join(dir, 'said-nhwc.json');
    fs.writeFileSync(said, JSON.stringify({ family: 'isnet', input: { layout: 'nhwc' } }));
    await t.rejects(createRemover({ ...base, modelFile: ISNET_FP32, modelDescriptor: said }), {
      name: 'ModelFileError',
      message: /input 'input' has 1024 channels in dimension 3 \[1, 3, 1024, 1024\], expected 3 \(NHWC RGB\)/,
    });
  });

  await t.test('isnet: the bundled fp32 file as a file of ISNet upstream conventions (mean 0.5, std 1.0 instead of 128/256)', async (t) => {
    const c = compare(await removeWith({ modelFile: ISNET_FP32, modelFamily: 'isnet' }), reference);
    t.ok(c.mean < 0.5 && c.over2 < 0.01, `isnet family vs bundled: ${fmt(c)}`);
  });

  await t.test('u2net: 320² ImageNet input resized inside the graph, d0 squeezed and min-max normalised; through `cutout remove`', async (t) => {
    const file = writeU2netStyle(dir);
    // The reference for a 320² input: the same resizes with ISNet's own input, d0 as it is, read as
    // custom with the bundled normalisation ((v - 128) / 256) and the same min-max range.
    const refFile = writeU2netStyle(dir, { isnetInput: true, plainOutput: true, name: 'u2net-reference.onnx' });
    fs.writeFileSync(
      `${refFile}.json`,
      JSON.stringify({
        family: 'custom',
        input: { width: 320, height: 320, mean: [128 / 255, 128 / 255, 128 / 255], std: [256 / 255, 256 / 255, 256 / 255], layout: 'nchw' },
        output: { index: 0, activation: 'none', range: 'minmax' },
      }),
    );
    const out = path.join(dir, 'out');
    const lines: string[] = [];
    const io = { stdout: { write: (s: string) => lines.push(s) }, stderr: { write: (s: string) => lines.push(s) } };
    const code = await runRemoveCommand(
      ['--model-file', file, '--model-family', 'u2net', '--channels', 'alpha', '--workers', '1', '--device', 'cpu', '-o', out, photoFileIn(dir)],
      io,
    );
    t.equal(code, 0, lines.join(''));
    const written = fs.readdirSync(out);
    t.same(written, ['figure.png']);
    const alpha = await alphaOf(fs.readFileSync(path.join(out, written[0]!)));
    const at320 = await removeWith({ modelFile: refFile });
    const c = compare(alpha.data, at320);
    t.ok(c.mean < 0.05 && c.max <= 3, `u2net-style vs the same graph with ISNet's input and output: ${fmt(c)}`);
    // Against the bundled model at 1024² the 320² input loses detail at the edges only.
    const far = compare(alpha.data, reference);
    t.ok(far.mean < 3, `u2net-style (320²) vs bundled (1024²): ${fmt(far)}`);
  });
});

t.test('a file with a symbolic batch on the batching path: several requests per inference run, the same mattes', async (t) => {
  const dir = t.testdir();
  const file = writeBirefnetStyle(dir, { batch: 'symbolic' });
  const photos = [photo, await syntheticPhoto(800, 563, 'png'), await syntheticFigure(640, 480, 'png')];
  // The whole-removal path, one photo per run (the CPU's default for a file): the reference.
  const alone = await createRemover({ ...base, modelFile: file, modelFamily: 'birefnet' });
  t.equal(alone.pool.info?.batching, undefined, 'on the CPU a file runs one photo per run unless asked');
  t.equal(alone.pool.info?.modelBatch, 'symbolic');
  const reference: Buffer[] = [];
  for (const p of photos) reference.push((await alphaOf((await alone.remove(p, { channels: 'alpha' })).data)).data);
  await alone.close();

  const batches: number[] = [];
  const pool = await createRemovalPool({
    modelFile: file,
    modelFamily: 'birefnet',
    device: 'cpu',
    fileBatching: true,
    workers: 3,
    maxBatch: 4,
    batchWaitMs: 200,
    warmUp: false,
    onBatch: (b) => batches.push(b.size),
  });
  t.teardown(() => pool.close());
  t.match(pool.info, { modelBatch: 'symbolic', batching: { maxBatch: 4 } }, 'the staged path, batches of up to 4');
  const s = await startTestServer(t, { pool });
  const answers = await Promise.all(
    photos.map((p, i) => {
      const { body, contentType } = multipart([
        { name: 'image_file', value: p, filename: `photo-${i}` },
        { name: 'size', value: 'full' },
        { name: 'channels', value: 'alpha' },
      ]);
      return request(`${s.url}/v1.0/removebg`, { method: 'POST', headers: { 'content-type': contentType, 'x-api-key': KEY }, body });
    }),
  );
  for (const [i, res] of answers.entries()) {
    t.equal(res.status, 200, res.status === 200 ? `photo ${i} removed` : res.text());
    const c = compare((await alphaOf(res.body)).data, reference[i]!);
    t.ok(c.mean < 0.5 && c.over2 < 0.01, `photo ${i}, batched vs alone: ${fmt(c)}`);
  }
  t.ok(
    batches.some((n) => n > 1),
    `several photos in one run (batch sizes ${batches.join(', ')})`,
  );

  // A fixed batch of 1 cannot batch: asked to, it runs one photo per run and says why.
  const fixed = await createRemovalPool({ ...base, modelFile: writeBirefnetStyle(dir), modelFamily: 'birefnet', fileBatching: true });
  t.teardown(() => fixed.close());
  t.same([fixed.info?.batching, fixed.info?.modelBatch], [undefined, 'fixed']);
});

t.test('fp16 files on the CPU: fp16 weights with float32 ends, and float16 input and output', async (t) => {
  const dir = t.testdir();
  // The float reference as a file of the same family (mean 0.5, std 1.0): the fp16 files differ from
  // it by fp16 arithmetic only.
  const fp32 = await removeWith({ modelFile: ISNET_FP32, modelFamily: 'isnet' });
  const shipped = writeFp16AsShipped(dir);
  const asShipped = await removeWith({ modelFile: shipped, modelFamily: 'isnet' });
  const near = compare(asShipped, fp32);
  t.ok(near.mean < 0.5 && near.over2 < 0.01, `fp16 weights (float32 ends) vs the fp32 file: ${fmt(near)}`);

  await t.test('float16 input and outputs, through the HTTP service: the shipped file’s matte within fp16 rounding of the photo', async (t) => {
    const file = writeFp16IoStyle(dir);
    const pool = await createRemovalPool({ ...base, modelFile: file, modelFamily: 'isnet' });
    t.teardown(() => pool.close());
    // Its memory estimate counts the fp16 weights as the float32 the CPU provider holds them in.
    t.ok((pool.info?.modelFileSize?.float16WeightBytes ?? 0) > 80e6, `fp16 weights: ${pool.info?.modelFileSize?.float16WeightBytes} bytes`);
    t.match(
      formatMemoryEstimate(estimateMemory(pool.info!.modelFileSize, 1)),
      /isnet-fp16-io\.onnx, estimated from its 8\d MB file \(fp16 weights counted as float32\)/,
    );
    const s = await startTestServer(t, { pool });
    const { body, contentType } = multipart([
      { name: 'image_file', value: photo, filename: 'figure.jpg' },
      { name: 'size', value: 'full' },
      { name: 'channels', value: 'alpha' },
    ]);
    const res = await request(`${s.url}/v1.0/removebg`, { method: 'POST', headers: { 'content-type': contentType, 'x-api-key': KEY }, body });
    t.equal(res.status, 200, res.status === 200 ? 'removed' : res.text());
    // Not byte for byte: with the casts in the graph ONNX Runtime's CPU provider (no fp16 kernels for
    // most nodes) folds the input's cast into the float32 it computes in, so that photo never
    // becomes float16; here it arrives as float16. A few pixels where the mask is unstable move.
    const alpha = (await alphaOf(res.body)).data;
    const c = compare(alpha, asShipped);
    t.ok(c.mean < 0.05 && c.over2 < 0.0005, `float16 ends converted by the addon vs by the graph's casts: ${fmt(c)}`);
    const f = compare(alpha, fp32);
    t.ok(f.mean < 0.05 && f.over2 < 0.0005, `vs the fp32 file: ${fmt(f)}`);
    // A float16 file read as float32 would be nonsense or an error, never this close: see below.
  });

  await t.test('a float16 file read as float32 gives no matte: the element types are checked, not assumed', async (t) => {
    // The addon told float32 for a float16 input: ONNX Runtime refuses the run, the request fails.
    const { loadBinding } = await import('../../src/native/binding.js');
    const { checkModelFile, sessionOptionsForFile } = await import('../../src/model/families.js');
    const file = path.join(dir, 'isnet-fp16-io.onnx');
    const opts = sessionOptionsForFile(checkModelFile({ file, family: 'isnet' }), 1);
    t.same([opts.inputType, opts.outputType], ['float16', 'float16']);
    const binding = loadBinding();
    const wrong = new binding.Session(file, { ...opts, inputType: undefined, outputType: undefined });
    t.teardown(() => wrong.close());
    t.throws(() => wrong.infer(new Uint8Array(1024 * 1024 * 3), 3), { code: 'ERR_CUTOUT_INFERENCE', message: /float16|tensor\(float\)/ });
    t.throws(() => new binding.Session(file, { ...opts, inputType: 'half' as never }), {
      code: 'ERR_CUTOUT_ARG',
      message: "Expected 'float32' or 'float16' for options.inputType but received 'half'",
    });
  });
});

t.test('a file that breaks its family is refused before any worker starts', async (t) => {
  const dir = t.testdir();
  const file = writeSignatureGraph(dir, 'small.onnx', {
    inputs: [{ name: 'input', elemType: 1, dims: [1, 3, 512, 512] }],
    outputs: [{ name: 'output', elemType: 1, dims: [1, 1, 512, 512] }],
  });
  await t.rejects(createRemover({ ...base, modelFile: file, modelFamily: 'birefnet' }), {
    name: 'ModelFileError',
    message: `The model file ${file} (family birefnet) does not fit: input 'input' is [1, 3, 512, 512], expected 1024x1024 (height x width) for this family; output 'output' is [1, 1, 512, 512], expected [N, 1, 1024, 1024] or [N, 1024, 1024] (one mask at the input's size)`,
  });
  await t.rejects(createRemover({ ...base, modelFile: ISNET_FP32, model: 'isnet-int8' }), {
    message: /^--model isnet-int8 and --model-file .* name two models: give one$/,
  });
  // Through `cutout remove`: exit 1 and the message, nothing processed.
  const lines: string[] = [];
  const io = { stdout: { write: (s: string) => lines.push(s) }, stderr: { write: (s: string) => lines.push(s) } };
  const photoFile = photoFileIn(dir);
  const code = await runRemoveCommand(['--model-file', file, '--model-family', 'isnet', '--device', 'cpu', photoFile], io);
  t.equal(code, 1);
  t.match(lines.join(''), /^cutout: The model file .*small\.onnx \(family isnet\) does not fit: input 'input' is \[1, 3, 512, 512\], expected 1024x1024/);
  const both = await runRemoveCommand(['--model', 'isnet-fp32', '--model-file', file, photoFile], io);
  t.equal(both, 2, 'a usage error');
  t.match(lines.join(''), /cutout remove: --model isnet-fp32 and --model-file .* name two models/);
});
