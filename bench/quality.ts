// Quality benchmark: `npm run bench:quality [-- --only am_ --limit N --variants peer,plain --model isnet-int8]`.
// A model file of one's own instead of a bundled one: `-- --model-file F [--model-family N] [--model-descriptor J]`
// (the same checks as `cutout serve --model-file`, docs/models.md).
// Scores the peer library and our four pipelines on the DEV evaluation set, side by side in one
// run, at the ground truth's resolution. See docs/quality.md.
//
// Evaluation data is read at run time from $CUTOUT_EVAL_DIR or ../shared/eval/dev (beside the repo,
// or beside the local checkout a fresh clone came from: bench/quality/eval-dir.ts); never copied.

import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp, { type OverlayOptions, type Sharp } from 'sharp';
import {
  alphaScoresForRegions,
  backdropCorrectedReference,
  compositeOver,
  estimateBackdrop,
  inputColourReference,
  maskScores,
  matteFromBytes,
  meanRgbError,
  unknownRegion,
  type AlphaScores,
  type Matte,
} from './quality/metrics.js';
import { MODEL_FAMILIES, parseModelFamily } from '../src/domain/model-family.js';
import type { PoolOptions } from '../src/pool/pool-api.js';
import { evalDir as findEvalDir } from './quality/eval-dir.js';
import { parseManifest, type ManifestRow } from './quality/manifest.js';
import { renderMarkdown, summarize, type ItemResult, type VariantResult } from './quality/report.js';
import type { PeerRequest, PeerResponse } from './peer.js';

// ---------------------------------------------------------------------------------------------
// Variants

interface Prediction {
  /** Straight-alpha RGBA, 8-bit, `width`×`height`. */
  rgba: Uint8Array;
  width: number;
  height: number;
  seconds: number;
}

interface Variant {
  name: string;
  description: string;
  run: (imagePath: string, bytes: Buffer) => Promise<Prediction>;
}

/** The subset of our library API used here (src/lib/remove.ts). */
interface Remover {
  remove(input: Buffer, options: Record<string, unknown>): Promise<{ data: Buffer | Uint8Array; width: number; height: number; contentType: string }>;
  close(): Promise<void>;
}

/** Peer library in a child process (bench/peer.ts). */
class PeerClient {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: PeerResponse) => void; reject: (e: Error) => void }>();

  private start(): ChildProcess {
    const child = fork(fileURLToPath(new URL('./peer.js', import.meta.url)), [], {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (msg: PeerResponse) => {
      const p = this.pending.get(msg.id);
      if (p !== undefined) {
        this.pending.delete(msg.id);
        p.resolve(msg);
      }
    });
    child.on('exit', (code, signal) => {
      if (this.child === child) this.child = undefined;
      const err = new Error(`peer process exited (${signal ?? code})`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    });
    return child;
  }

  async run(imagePath: string): Promise<Prediction> {
    this.child ??= this.start();
    const id = this.nextId++;
    const child = this.child;
    const res = await new Promise<PeerResponse>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      child.send({ id, imagePath } satisfies PeerRequest);
    });
    if (!res.ok) throw new Error(`peer: ${res.error}`);
    return { rgba: res.rgba, width: res.width, height: res.height, seconds: res.seconds };
  }

  close(): void {
    this.child?.disconnect();
    this.child = undefined;
  }
}

async function decodeRgba(data: Uint8Array): Promise<{ rgba: Uint8Array; width: number; height: number }> {
  const { data: raw, info } = await sharp(data).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 4) throw new Error(`expected 4 channels, got ${info.channels}`);
  return { rgba: new Uint8Array(raw.buffer, raw.byteOffset, raw.length), width: info.width, height: info.height };
}

/** Which of our models: a bundled one by name, or a model file with its family and descriptor. */
type OurModel = Pick<PoolOptions, 'model' | 'modelFile' | 'modelFamily' | 'modelDescriptor'>;

function describeModel(m: OurModel): string {
  if (m.modelFile === undefined) return m.model ?? 'the manifest default';
  const extra = [m.modelFamily && `family ${m.modelFamily}`, m.modelDescriptor && `descriptor ${m.modelDescriptor}`].filter(Boolean);
  return `the model file ${m.modelFile}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

async function loadOurs(model: OurModel): Promise<{ remover?: Remover; error?: string }> {
  // Resolved at run time so that this bench builds (and runs the peer) before the library lands.
  const spec = '../src/lib/remove.js';
  try {
    const mod = (await import(spec)) as { createRemover?: (o: PoolOptions) => Promise<Remover> };
    if (typeof mod.createRemover !== 'function') return { error: `${spec} has no createRemover export` };
    return { remover: await mod.createRemover({ workers: 1, ...model }) };
  } catch (err) {
    const reason = err instanceof Error ? err.message.split('\n')[0] : String(err);
    // A model file's refusal is about the file (which rule it breaks), not the library.
    return { error: model.modelFile !== undefined ? reason : `our library is unavailable: ${reason}` };
  }
}

function ourVariant(
  name: string,
  description: string,
  remover: Remover | undefined,
  unavailable: string | undefined,
  refine: boolean,
  matting: boolean,
  decontaminate: boolean,
): Variant {
  return {
    name,
    description,
    run: async (_imagePath, bytes) => {
      if (remover === undefined) throw new Error(unavailable ?? 'our library is unavailable');
      const t0 = performance.now();
      const out = await remover.remove(bytes, { size: 'full', format: 'png', channels: 'rgba', refine, matting, decontaminate });
      const seconds = (performance.now() - t0) / 1000;
      const decoded = await decodeRgba(out.data);
      return { ...decoded, seconds };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Data

function repoRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(path.join(dir, 'package.json'))) return dir;
    const up = path.dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root (package.json)');
    dir = up;
  }
}

async function readChannel(file: string, channel = 0): Promise<Matte> {
  const { data, info } = await sharp(file).raw().toBuffer({ resolveWithObject: true });
  return matteFromBytes(data, info.width, info.height, info.channels, Math.min(channel, info.channels - 1));
}

async function readRgb(file: string): Promise<{ rgb: Uint8Array; width: number; height: number }> {
  const { data, info } = await sharp(file).removeAlpha().toColourspace('srgb').raw().toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw new Error(`expected RGB, got ${info.channels} channels`);
  return { rgb: new Uint8Array(data.buffer, data.byteOffset, data.length), width: info.width, height: info.height };
}

/** Resizes a prediction to the GT size (never the GT to the prediction). */
async function toSize(p: Prediction, width: number, height: number): Promise<Uint8Array> {
  if (p.width === width && p.height === height) return p.rgba;
  const out = await sharp(p.rgba, { raw: { width: p.width, height: p.height, channels: 4 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return new Uint8Array(out.buffer, out.byteOffset, out.length);
}

// ---------------------------------------------------------------------------------------------
// Contact sheet

const THUMB_H = 200;
const SHEET_BG = { r: 40, g: 40, b: 40 };
const COLOUR_BG = { r: 255, g: 0, b: 255 }; // saturated magenta (green is used by the halo metric)

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function label(text: string, width: number, height: number, size = 16): Buffer {
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
      `<rect x="0" y="0" width="${width}" height="${height}" fill="black" fill-opacity="0.55"/>` +
      `<text x="4" y="${height - 6}" font-family="sans-serif" font-size="${size}" fill="white">${escapeXml(text)}</text></svg>`,
  );
}

function checkerboard(width: number, height: number, cell = 10): Buffer {
  const buf = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const v = ((x / cell) | 0) % 2 === ((y / cell) | 0) % 2 ? 204 : 153;
      buf.fill(v, (y * width + x) * 3, (y * width + x) * 3 + 3);
    }
  }
  return buf;
}

class ContactSheet {
  private readonly rows: Buffer[] = [];
  constructor(
    readonly cellWidth: number,
    readonly variants: readonly string[],
  ) {}

  get width(): number {
    return this.cellWidth * (2 + 2 * this.variants.length);
  }

  /** Thumbnail of straight RGBA over a checkerboard and over a saturated colour. */
  private async cutoutCells(rgba: Uint8Array, w: number, h: number): Promise<[Buffer, Buffer]> {
    const tw = Math.max(1, Math.round((w * THUMB_H) / h));
    const thumb = await sharp(rgba, { raw: { width: w, height: h, channels: 4 } })
      .resize(tw, THUMB_H, { fit: 'fill' })
      .raw()
      .toBuffer();
    const over = (base: Sharp): Promise<Buffer> =>
      base
        .composite([{ input: thumb, raw: { width: tw, height: THUMB_H, channels: 4 } }])
        .png()
        .toBuffer();
    return Promise.all([
      over(sharp(checkerboard(tw, THUMB_H), { raw: { width: tw, height: THUMB_H, channels: 3 } })),
      over(sharp({ create: { width: tw, height: THUMB_H, channels: 3, background: COLOUR_BG } })),
    ]);
  }

  async addRow(id: string, imagePath: string, gt: Matte, cutouts: ReadonlyMap<string, Uint8Array>): Promise<void> {
    const cells: Array<Buffer | undefined> = [];
    cells.push(await sharp(imagePath).resize({ height: THUMB_H }).png().toBuffer());
    const gtBytes = Buffer.alloc(gt.data.length);
    for (let i = 0; i < gt.data.length; i++) gtBytes[i] = Math.round((gt.data[i] as number) * 255);
    cells.push(
      await sharp(gtBytes, { raw: { width: gt.width, height: gt.height, channels: 1 } })
        .resize({ height: THUMB_H })
        .png()
        .toBuffer(),
    );
    for (const v of this.variants) {
      const rgba = cutouts.get(v);
      if (rgba === undefined) cells.push(undefined, undefined);
      else cells.push(...(await this.cutoutCells(rgba, gt.width, gt.height)));
    }
    const layers: OverlayOptions[] = [];
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i];
      if (cell === undefined) continue;
      const meta = await sharp(cell).metadata();
      const w = Math.min(meta.width ?? this.cellWidth, this.cellWidth);
      layers.push({ input: cell, left: i * this.cellWidth + Math.floor((this.cellWidth - w) / 2), top: 0 });
    }
    layers.push({ input: label(id, Math.min(this.cellWidth, 12 + id.length * 10), 24, 15), left: 0, top: 0 });
    this.rows.push(
      await sharp({ create: { width: this.width, height: THUMB_H, channels: 3, background: SHEET_BG } })
        .composite(layers)
        .png()
        .toBuffer(),
    );
  }

  async write(file: string): Promise<void> {
    const headerH = 28;
    const titles = ['input', 'ground truth', ...this.variants.flatMap((v) => [`${v} / checker`, `${v} / colour`])];
    const layers: OverlayOptions[] = titles.map((t, i) => ({
      input: label(t, this.cellWidth, headerH, 16),
      left: i * this.cellWidth,
      top: 0,
    }));
    this.rows.forEach((row, i) => layers.push({ input: row, left: 0, top: headerH + i * THUMB_H }));
    await sharp({ create: { width: this.width, height: headerH + this.rows.length * THUMB_H, channels: 3, background: SHEET_BG } })
      .composite(layers)
      .png({ compressionLevel: 9 })
      .toFile(file);
  }
}

// ---------------------------------------------------------------------------------------------
// Main

interface Args {
  only: string[];
  limit: number;
  variants: string[] | undefined;
  contact: boolean;
  /** Our model, by manifest name (default: the manifest's default), or a model file. */
  model: OurModel;
  /** Output directory (default bench/results). */
  out: string | undefined;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { only: [], limit: Infinity, variants: undefined, contact: true, model: {}, out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--only') args.only.push(...value().split(',').filter(Boolean));
    else if (a.startsWith('--only=')) args.only.push(...a.slice(7).split(',').filter(Boolean));
    else if (a === '--limit') args.limit = Number(value());
    else if (a.startsWith('--limit=')) args.limit = Number(a.slice(8));
    else if (a === '--variants') args.variants = value().split(',');
    else if (a.startsWith('--variants=')) args.variants = a.slice(11).split(',');
    else if (a === '--no-contact') args.contact = false;
    else if (a === '--out') args.out = value();
    else if (a === '--model') args.model.model = value();
    else if (a === '--model-file') args.model.modelFile = path.resolve(value());
    else if (a === '--model-family') {
      const text = value();
      const family = parseModelFamily(text);
      if (family === undefined) throw new Error(`--model-family ${text}: not one of ${MODEL_FAMILIES.join(', ')}`);
      args.model.modelFamily = family;
    } else if (a === '--model-descriptor') args.model.modelDescriptor = path.resolve(value());
    else if (a.startsWith('--out=')) args.out = a.slice(6);
    else
      throw new Error(
        `unknown argument ${a} (use --only PREFIX[,PREFIX], --limit N, --variants a,b, --no-contact, --model NAME | --model-file F [--model-family N] [--model-descriptor J], --out DIR)`,
      );
  }
  if (!(args.limit > 0)) throw new Error('--limit must be a positive number');
  if (args.model.model !== undefined && args.model.modelFile !== undefined) throw new Error('--model and --model-file: give one');
  if (args.model.modelFile === undefined && (args.model.modelFamily !== undefined || args.model.modelDescriptor !== undefined)) {
    throw new Error('--model-family and --model-descriptor describe a --model-file: give the file too');
  }
  return args;
}

async function scoreItem(row: ManifestRow, evalDir: string, variants: readonly Variant[], sheet: ContactSheet | undefined): Promise<ItemResult> {
  const result: ItemResult = {
    id: row.id,
    dataset: row.dataset,
    category: row.category,
    gtType: row.gtType,
    width: row.width,
    height: row.height,
    variants: {},
  };
  const imagePath = path.join(evalDir, row.imagePath);
  let gt: Matte;
  let bytes: Buffer;
  let input: { rgb: Uint8Array; width: number; height: number };
  let trimap: Matte | undefined;
  try {
    bytes = await readFile(imagePath);
    gt = await readChannel(path.join(evalDir, row.gtPath));
    input = await readRgb(imagePath);
    if (row.gtType === 'alpha_matte' && row.trimapPath !== '') trimap = await readChannel(path.join(evalDir, row.trimapPath));
  } catch (err) {
    result.error = `cannot read item: ${err instanceof Error ? err.message : String(err)}`;
    return result;
  }
  const { width, height } = gt;
  result.width = width;
  result.height = height;

  // Per-item references for the alpha metrics and our halo measures.
  const unknown = trimap !== undefined ? unknownRegion(trimap) : undefined;
  let refs: { backdrop?: Float32Array; input?: Float32Array } = {};
  if (row.gtType === 'alpha_matte' && trimap !== undefined && input.width === width && input.height === height) {
    const knownBg = new Uint8Array(width * height);
    for (let i = 0; i < knownBg.length; i++) knownBg[i] = (trimap.data[i] as number) === 0 ? 1 : 0;
    const backdrop = estimateBackdrop(input.rgb, 3, width, height, knownBg);
    refs = {
      backdrop: backdropCorrectedReference(input.rgb, 3, gt, backdrop),
      input: inputColourReference(input.rgb, 3, gt),
    };
  }

  const cutouts = new Map<string, Uint8Array>();
  for (const v of variants) {
    let r: VariantResult;
    try {
      const pred = await v.run(imagePath, bytes);
      const rgba = await toSize(pred, width, height);
      const alpha = matteFromBytes(rgba, width, height, 4, 3);
      r = { ok: true, seconds: pred.seconds, predSize: [pred.width, pred.height] };
      if (row.gtType === 'alpha_matte') {
        const [u, w] = alphaScoresForRegions(alpha, gt, [unknown, undefined]) as [AlphaScores, AlphaScores];
        r.alpha = { unknown: u, whole: w };
        if (refs.backdrop !== undefined && refs.input !== undefined) {
          const comp = compositeOver(rgba, width * height);
          r.alpha.haloBackdrop = meanRgbError(comp, refs.backdrop, unknown);
          r.alpha.haloInput = meanRgbError(comp, refs.input, unknown);
        }
      } else {
        r.mask = maskScores(alpha, gt);
      }
      cutouts.set(v.name, rgba);
    } catch (err) {
      r = { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
    result.variants[v.name] = r;
  }
  if (sheet !== undefined) {
    try {
      await sheet.addRow(row.id, imagePath, gt, cutouts);
    } catch (err) {
      console.error(`contact sheet: ${row.id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return result;
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const args = parseArgs(process.argv.slice(2));
  const root = repoRoot();
  const evalDir = findEvalDir(root);
  const manifest = parseManifest(await readFile(path.join(evalDir, 'manifest.csv'), 'utf8'));
  const rows = manifest
    .filter((r) => args.only.length === 0 || args.only.some((p) => r.id.startsWith(p)))
    .slice(0, Number.isFinite(args.limit) ? args.limit : undefined);
  if (rows.length === 0) throw new Error('no manifest rows selected');

  const wanted = (name: string): boolean => args.variants === undefined || args.variants.includes(name);
  const peer = new PeerClient();
  const needOurs = ['plain', 'refined', 'refined+decont', 'default'].some(wanted);
  const ours = needOurs ? await loadOurs(args.model) : {};
  // A model file that is refused (its family's checks, docs/models.md) ends the bench with the reason.
  if (ours.error !== undefined && args.model.modelFile !== undefined) throw new Error(ours.error);
  if (ours.error !== undefined) console.error(`warning: ${ours.error}; our variants will be reported as failed`);
  const allVariants: Variant[] = [
    { name: 'peer', description: '@imgly/background-removal-node 1.4.5, model medium, raw RGBA output', run: (p) => peer.run(p) },
    ourVariant('plain', 'ours, bilinear upscaling (refine:false, decontaminate:false)', ours.remover, ours.error, false, false, false),
    ourVariant('refined', 'ours, refine:true, matting:false, decontaminate:false', ours.remover, ours.error, true, false, false),
    ourVariant('refined+decont', 'ours, refine:true, matting:false, decontaminate:true', ours.remover, ours.error, true, false, true),
    ourVariant('default', 'ours, the default: refine:true, matting:true, decontaminate:true', ours.remover, ours.error, true, true, true),
  ];
  const variants = allVariants.filter((v) => wanted(v.name));
  if (variants.length === 0) throw new Error(`no variants selected (known: ${allVariants.map((v) => v.name).join(', ')})`);

  const cellWidth = Math.max(...rows.map((r) => Math.ceil((r.width * THUMB_H) / r.height)));
  const sheet = args.contact
    ? new ContactSheet(
        cellWidth,
        variants.map((v) => v.name),
      )
    : undefined;

  const items: ItemResult[] = [];
  try {
    for (const [i, row] of rows.entries()) {
      const item = await scoreItem(row, evalDir, variants, sheet);
      items.push(item);
      const line = Object.entries(item.variants)
        .map(([v, r]) => (r.ok ? `${v} ${(r.seconds ?? 0).toFixed(1)}s` : `${v} FAILED`))
        .join(', ');
      console.error(`[${i + 1}/${rows.length}] ${row.id}: ${item.error ?? line}`);
    }
  } finally {
    peer.close();
    await ours.remover?.close().catch(() => undefined);
  }

  const summaries = summarize(
    items,
    variants.map((v) => v.name),
  );
  const totalSeconds = (performance.now() - t0) / 1000;
  const header = [
    `# Quality benchmark (${new Date().toISOString()})`,
    '',
    `Eval set: ${evalDir} (${rows.length} of ${manifest.length} items). Predictions are resized to the GT size.`,
    `Variants: ${variants.map((v) => `**${v.name}**: ${v.description}`).join('; ')}. Our model: ${describeModel(args.model)}.`,
    `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}. ` +
      `s/img = median wall seconds per image (peer: in its own process, excl. file read; ours: remove() incl. PNG encode). ` +
      `Whole bench: ${totalSeconds.toFixed(0)} s.`,
    '',
  ].join('\n');
  const markdown = header + renderMarkdown(summaries, items);
  process.stdout.write(markdown);

  const outDir = path.resolve(args.out ?? path.join(root, 'bench/results'));
  await mkdir(outDir, { recursive: true });
  await writeFile(path.join(outDir, 'quality.md'), markdown);
  await writeFile(
    path.join(outDir, 'quality.json'),
    JSON.stringify(
      {
        meta: {
          date: new Date().toISOString(),
          evalDir,
          items: rows.length,
          args,
          variants: variants.map((v) => ({ name: v.name, description: v.description })),
          oursError: ours.error ?? null,
          node: process.version,
          cpus: os.cpus().length,
          totalSeconds,
        },
        summaries,
        items,
      },
      (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v),
      2,
    ),
  );
  if (sheet !== undefined) {
    try {
      await sheet.write(path.join(outDir, 'quality-contact.png'));
    } catch (err) {
      console.error(`contact sheet: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  console.error(`wrote ${outDir}/quality.{md,json}${sheet ? ', quality-contact.png' : ''} in ${totalSeconds.toFixed(1)} s`);
}

const cv = process.argv.includes('--cv');
// --cost [--runs N]: the time per photo of each quality level instead (bench/quality-cost.ts).
if (process.argv.includes('--cost')) await import('./quality-cost.js');
else
  (cv ? import('./quality-cv.js').then((m) => m.mainCv(process.argv.slice(2))) : main()).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
