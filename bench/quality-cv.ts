// Cross-validated quality: `npm run bench:quality -- --cv [--levers a,b] [--model M] [--rounds N]`.
// Leave one alphamatting photo out, leave one DAVIS sequence out: every tunable knob of a lever is
// chosen on the other folds (coordinate descent, bench/quality/cross-validation.ts) and scored on the
// fold left out. The model's mattes come from the on-disk cache (bench/matte-cache.ts), so the
// stages are scored without running inference again. See docs/quality.md, "Cross-validated evaluation".
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { loadBinding, type CompositeOptions, type CompositeTuning, type NativeBinding } from '../src/native/binding.js';
import { PACKAGE_ROOT } from '../src/model/manifest.js';
import {
  backdropCorrectedReference,
  compositeOver,
  estimateBackdrop,
  gradientError,
  iou,
  boundaryF,
  mae,
  matteFromBytes,
  meanRgbError,
  mse,
  sad,
  unknownRegion,
  type Matte,
} from './quality/metrics.js';
import { evalDir as findEvalDir } from './quality/eval-dir.js';
import { parseManifest, type ManifestRow } from './quality/manifest.js';
import {
  coordinateDescent,
  foldMeans,
  foldsOf,
  objective,
  pairedDiff,
  settingKey,
  spread,
  type CvItem,
  type Dataset,
  type Fold,
  type ItemMetrics,
  type Knob,
  type Loss,
  type MetricsById,
  type Setting,
} from './quality/cross-validation.js';
import * as codec from '../src/worker/codec.js';
import { MatteCache, type MatteView } from './matte-cache.js';
import { fuseMattes, FUSIONS, type Fusion } from './matte-fusion.js';

// ---------------------------------------------------------------------------------------------
// Items

interface EvalItem {
  cv: CvItem;
  row: ManifestRow;
  bytes: Buffer;
  rgba: Uint8Array;
  width: number;
  height: number;
  gt: Matte;
  unknown?: Uint8Array;
  /** The trimap's definite background and foreground (where whole-image error lives outside the edge). */
  knownBg?: Uint8Array;
  knownFg?: Uint8Array;
  /** Green composite of the true foreground (halo bg-ref, docs/quality.md). */
  haloRef?: Float32Array;
}

async function loadItems(evalDir: string, rows: readonly ManifestRow[]): Promise<EvalItem[]> {
  const items: EvalItem[] = [];
  for (const row of rows) {
    const bytes = await readFile(path.join(evalDir, row.imagePath));
    const { data, info } = await sharp(path.join(evalDir, row.gtPath)).raw().toBuffer({ resolveWithObject: true });
    const gt = matteFromBytes(data, info.width, info.height, info.channels, 0);
    const raw = await codec.decodeRgba(bytes, 50_000_000, gt.width, gt.height, true);
    if (raw.width !== gt.width || raw.height !== gt.height) throw new Error(`${row.id}: image and ground truth differ in size`);
    const rgba = new Uint8Array(raw.data.buffer, raw.data.byteOffset, raw.data.length);
    const dataset: Dataset = row.gtType === 'alpha_matte' ? 'alpha' : 'mask';
    const item: EvalItem = {
      cv: { id: row.id, group: row.group, category: row.category, dataset },
      row,
      bytes,
      rgba,
      width: gt.width,
      height: gt.height,
      gt,
    };
    if (dataset === 'alpha' && row.trimapPath) {
      const t = await sharp(path.join(evalDir, row.trimapPath)).raw().toBuffer({ resolveWithObject: true });
      const trimap = matteFromBytes(t.data, t.info.width, t.info.height, t.info.channels, 0);
      item.unknown = unknownRegion(trimap);
      item.knownBg = Uint8Array.from(trimap.data, (v) => (v === 0 ? 1 : 0));
      item.knownFg = Uint8Array.from(trimap.data, (v) => (v === 1 ? 1 : 0));
      const knownBg = new Uint8Array(trimap.data.length);
      for (let i = 0; i < knownBg.length; i++) knownBg[i] = (trimap.data[i] as number) === 0 ? 1 : 0;
      const rgb = new Uint8Array(gt.width * gt.height * 3);
      for (let i = 0, j = 0; i < rgb.length; i += 3, j += 4) rgb.set(rgba.subarray(j, j + 3), i);
      item.haloRef = backdropCorrectedReference(rgb, 3, gt, estimateBackdrop(rgb, 3, gt.width, gt.height, knownBg));
    }
    items.push(item);
  }
  return items;
}

// ---------------------------------------------------------------------------------------------
// Settings → mattes and composite options

/** Knob names are `<stage>.<field>` for the composite tuning, plus the switches and the matte source. */
function compositeOptions(s: Setting): CompositeOptions {
  const tuning: CompositeTuning = {};
  for (const [k, v] of Object.entries(s)) {
    const [stage, field] = k.split('.') as [string, string | undefined];
    if (field === undefined || typeof v !== 'number') continue;
    if (stage === 'refine' || stage === 'matting' || stage === 'foreground') {
      ((tuning[stage] ??= {}) as Record<string, number>)[field] = v;
    }
  }
  return { refine: s.refine === true, matting: s.matting === true, decontaminate: s.decontaminate === true, threads: 2, tuning };
}

/** The matte source of a setting: `views` (comma-separated view keys) fused by `fusion`. */
function matteViews(s: Setting, model: string): MatteView[] {
  const spec = typeof s.views === 'string' ? s.views : '1024';
  return spec.split('+').map((v) => ({ model: typeof s.model === 'string' ? s.model : model, size: Number(v.replace('f', '')), flip: v.endsWith('f') }));
}

// ---------------------------------------------------------------------------------------------
// Scoring

/** Scores already computed, on disk (bench/.cache/scores/), so a crashed or extended run starts where it was. */
const SCORES_VERSION = 2;

class Scorer {
  private readonly memo = new Map<string, Map<string, ItemMetrics>>();
  private readonly file: string;
  private readonly stored: Record<string, ItemMetrics>;
  composites = 0;
  private unsaved = 0;

  constructor(
    private readonly binding: NativeBinding,
    private readonly cache: MatteCache,
    private readonly items: readonly EvalItem[],
    private readonly model: string,
  ) {
    this.file = path.join(PACKAGE_ROOT, 'bench', '.cache', 'scores', `v${SCORES_VERSION}-${model}.json`);
    this.stored = existsSync(this.file) ? (JSON.parse(readFileSync(this.file, 'utf8')) as Record<string, ItemMetrics>) : {};
  }

  save(): void {
    mkdirSync(path.dirname(this.file), { recursive: true });
    writeFileSync(this.file, JSON.stringify(this.stored));
  }

  private async matte(item: EvalItem, s: Setting): Promise<{ data: Float32Array; size: number }> {
    const views = matteViews(s, this.model);
    const mattes = [];
    for (const v of views) mattes.push({ view: v, data: await this.cache.matte(v, item.cv.id, item.bytes) });
    if (mattes.length === 1) return { data: mattes[0]!.data, size: views[0]!.size };
    return fuseMattes(
      mattes.map((m) => ({ data: m.data, size: m.view.size })),
      (s.fusion ?? 'mean') as Fusion,
      Number(s.fusionBand ?? 0.1),
    );
  }

  /** Every item's metrics under `s` (memoised). `colour` adds the halo measure (needs decontaminate). */
  async metrics(s: Setting, subset?: ReadonlySet<string>): Promise<MetricsById> {
    const key = settingKey(s);
    let m = this.memo.get(key);
    if (!m) {
      m = new Map();
      this.memo.set(key, m);
    }
    for (const item of this.items) {
      if (subset && !subset.has(item.cv.id)) continue;
      if (m.has(item.cv.id)) continue;
      const k = `${key} ${item.cv.id}`;
      const known = this.stored[k];
      if (known) {
        m.set(item.cv.id, known);
        continue;
      }
      const scores = await this.scoreItem(item, s);
      this.stored[k] = scores;
      m.set(item.cv.id, scores);
      if (++this.unsaved >= 43) {
        this.save();
        this.unsaved = 0;
      }
    }
    return m;
  }

  private async scoreItem(item: EvalItem, s: Setting): Promise<ItemMetrics> {
    const { data, size } = await this.matte(item, s);
    const rgba = item.rgba.slice();
    this.binding.compositeMask(rgba, item.width, item.height, data, size, size, compositeOptions(s));
    this.composites++;
    const alpha = matteFromBytes(rgba, item.width, item.height, 4, 3);
    if (item.cv.dataset === 'mask') {
      // MAE split into alpha kept on background (false positives) and missed on the subject.
      let fp = 0;
      let fn = 0;
      for (let i = 0; i < alpha.data.length; i++) {
        if ((item.gt.data[i] as number) >= 0.5) fn += 1 - (alpha.data[i] as number);
        else fp += alpha.data[i] as number;
      }
      const n = alpha.data.length;
      return { iou: iou(alpha, item.gt), boundaryF: boundaryF(alpha, item.gt).f, mae: mae(alpha, item.gt), fpMass: fp / n, fnMass: fn / n };
    }
    const out: Record<string, number> = {
      sad: sad(alpha, item.gt, item.unknown),
      mse: mse(alpha, item.gt, item.unknown),
      grad: gradientError(alpha, item.gt, item.unknown),
      maeWhole: mae(alpha, item.gt),
      sadWhole: sad(alpha, item.gt),
      sadBg: sad(alpha, item.gt, item.knownBg),
      sadFg: sad(alpha, item.gt, item.knownFg),
    };
    if (item.haloRef) out.halo = meanRgbError(compositeOver(rgba, item.width * item.height), item.haloRef, item.unknown);
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// Levers

interface Lever {
  name: string;
  description: string;
  /** The lever's fixed part and its knobs' defaults. */
  base: Setting;
  knobs: Knob[];
  /** Folds the lever is tuned and scored on (decontamination: alpha only). */
  dataset?: Dataset;
  /** Selection loss (default: SAD / J&F error). */
  loss?: Loss;
}

// The default first, then the alternatives tried (one step each way where both make sense). Kept
// small: on the shared 2-core box every setting costs ~43 composites.
// The defaults are the constants before the cross-validation (band_lo 0.02, matting's
// band_dilate 3): the stages' structs now carry the two values every fold chose (0.05, 1), so the
// tuning passes these explicitly to score the old pipeline as it was.
const REFINE_KNOBS: Knob[] = [
  { name: 'refine.radius', values: [4, 2, 8] },
  { name: 'refine.eps', values: [5e-5, 1e-5, 5e-4] },
  { name: 'refine.bandLo', values: [0.02, 0.05] },
  { name: 'refine.bandHi', values: [0.98, 0.95] },
  { name: 'refine.bandDilate', values: [1, 3] },
];
const MATTING_KNOBS: Knob[] = [
  { name: 'matting.sureBg', values: [0.05, 0.1] },
  { name: 'matting.sureFg', values: [0.8, 0.9] },
  { name: 'matting.bandDilate', values: [3, 1] },
  { name: 'matting.sigma', values: [2, 4] },
  { name: 'matting.minSupport', values: [0.05, 0.2] },
  { name: 'matting.confidenceMin', values: [0.05, 0.1] },
  { name: 'matting.confidenceRange', values: [0.15, 0.3] },
];
const FOREGROUND_KNOBS: Knob[] = [
  { name: 'foreground.regularization', values: [1e-5, 1e-4] },
  { name: 'foreground.gradientWeight', values: [1, 3] },
  { name: 'foreground.smallIterations', values: [10, 20] },
  { name: 'foreground.bigIterations', values: [2, 4] },
  { name: 'foreground.maxWorkingPixels', values: [1 << 19, 1 << 17] },
];
const knobDefaults = (knobs: readonly Knob[]): Setting => Object.fromEntries(knobs.map((k) => [k.name, k.values[0]!]));

const PLAIN: Setting = { refine: false, matting: false, decontaminate: false };
const REFINED: Setting = { refine: true, matting: false, decontaminate: false, ...knobDefaults(REFINE_KNOBS) };
const MATTED: Setting = { ...REFINED, matting: true, ...knobDefaults(MATTING_KNOBS) };
const haloLoss: Loss = (_d, m) => m.halo ?? Number.NaN;

function levers(): Lever[] {
  return [
    { name: 'plain', description: 'bilinear upscaling (no knobs)', base: PLAIN, knobs: [] },
    { name: 'refined@defaults', description: 'guided refinement, committed constants (tuned on all of dev before: optimistic)', base: REFINED, knobs: [] },
    { name: 'refined', description: 'guided refinement, its 5 knobs chosen in-fold', base: REFINED, knobs: REFINE_KNOBS },
    { name: 'matting@defaults', description: 'refinement + colour-model matting, committed constants (optimistic)', base: MATTED, knobs: [] },
    {
      name: 'matting',
      description: 'refinement + colour-model matting, all 12 knobs chosen in-fold',
      base: MATTED,
      knobs: [...REFINE_KNOBS, ...MATTING_KNOBS],
    },
    // The knobs that every fold chose the same way (the runs above): each fold would have applied them.
    {
      name: 'refined@stable',
      description: 'guided refinement, radius 8 and band_lo 0.05 (chosen in every fold of `refined`)',
      base: { ...REFINED, 'refine.radius': 8, 'refine.bandLo': 0.05 },
      knobs: [],
    },
    {
      name: 'matting@stable',
      description: 'refinement + matting, band_lo 0.05 and matting band_dilate 1 (chosen in every fold of `matting`)',
      base: { ...MATTED, 'refine.bandLo': 0.05, 'matting.bandDilate': 1 },
      knobs: [],
    },
    {
      name: 'decont-off',
      description: 'matting@defaults, colour not estimated (halo bg-ref*)',
      base: { ...MATTED, decontaminate: false },
      knobs: [],
      dataset: 'alpha',
      loss: haloLoss,
    },
    {
      name: 'decont@defaults',
      description: 'matting@defaults + decontaminate, committed constants (halo bg-ref*)',
      base: { ...MATTED, decontaminate: true, ...knobDefaults(FOREGROUND_KNOBS) },
      knobs: [],
      dataset: 'alpha',
      loss: haloLoss,
    },
    {
      name: 'decont@stable',
      description: 'matting@defaults + decontaminate with big_iterations 4 (chosen in every fold of `decont`)',
      base: { ...MATTED, decontaminate: true, ...knobDefaults(FOREGROUND_KNOBS), 'foreground.bigIterations': 4 },
      knobs: [],
      dataset: 'alpha',
      loss: haloLoss,
    },
    {
      name: 'decont',
      description: 'matting@defaults + decontaminate, its 5 knobs chosen in-fold on halo bg-ref*',
      base: { ...MATTED, decontaminate: true, ...knobDefaults(FOREGROUND_KNOBS) },
      knobs: FOREGROUND_KNOBS,
      dataset: 'alpha',
      loss: haloLoss,
    },
  ];
}

/** Model-side levers over the chosen composite setting (`composite`): views and their fusion. */
function modelLevers(composite: Setting, sizes: readonly number[]): Lever[] {
  const out: Lever[] = [
    { name: 'single', description: '1024², as shipped', base: { ...composite, views: '1024' }, knobs: [] },
    { name: 'flip-tta', description: '1024² and its mirror image, averaged', base: { ...composite, views: '1024+1024f', fusion: 'mean' }, knobs: [] },
    {
      name: 'flip-tta-fused',
      description: '1024² and its mirror image, fused by a rule chosen in-fold (mean, confidence, or the mirror only where the first is uncertain)',
      base: { ...composite, views: '1024+1024f', fusion: 'mean', fusionBand: 0.1 },
      knobs: [
        { name: 'fusion', values: ['mean', 'confidence', 'edges'] },
        { name: 'fusionBand', values: [0.1, 0.05, 0.2, 0.3] },
      ],
    },
    { name: 'fp32', description: 'the fp32 model instead of int8, 1024²', base: { ...composite, views: '1024', model: 'isnet-fp32' }, knobs: [] },
    {
      name: 'int8-clip1.3',
      description: 'int8 re-quantised with every activation range ×1.3 (softer clipping), 1024²',
      base: { ...composite, views: '1024', model: 'isnet-int8~clip1.3' },
      knobs: [],
    },
    {
      name: 'int8-clip0.7',
      description: 'int8 re-quantised with every activation range ×0.7 (harder clipping), 1024²',
      base: { ...composite, views: '1024', model: 'isnet-int8~clip0.7' },
      knobs: [],
    },
  ];
  for (const s of sizes) {
    out.push({
      name: `scales-1024+${s}`,
      description: `1024² and ${s}², fused (rule and band chosen in-fold)`,
      base: { ...composite, views: `1024+${s}`, fusion: 'confidence', fusionBand: 0.1 },
      knobs: [
        { name: 'fusion', values: FUSIONS },
        { name: 'fusionBand', values: [0.1, 0.05, 0.2, 0.3] },
      ],
    });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Cross-validation

interface LeverResult {
  lever: Lever;
  folds: Fold[];
  /** Per fold (group): the setting chosen on the other folds, and the held-out metrics. */
  chosen: Map<string, Setting>;
  heldOut: Map<string, MetricsById>;
  /** The setting chosen on every fold at once (what would ship), restricted to knobs stable across folds. */
  whole: Setting;
  /** The setting chosen on every fold at once, before unstable knobs went back to their defaults. */
  all: Setting;
  stable: Record<string, boolean>;
}

async function crossValidate(scorer: Scorer, lever: Lever, allFolds: readonly Fold[], reference: Setting, rounds: number): Promise<LeverResult> {
  const folds = allFolds.filter((f) => lever.dataset === undefined || f.dataset === lever.dataset);
  const ids = new Set(folds.flatMap((f) => f.ids));
  const refMetrics = await scorer.metrics(reference, ids);
  const chosen = new Map<string, Setting>();
  const heldOut = new Map<string, MetricsById>();
  const choose = async (train: readonly Fold[]): Promise<Setting> => {
    if (lever.knobs.length === 0) return lever.base;
    const r = await coordinateDescent(lever.knobs, lever.base, async (s) => objective(train, await scorer.metrics(s, ids), refMetrics, lever.loss), rounds);
    return r.setting;
  };
  for (const f of folds) {
    const s = await choose(folds.filter((g) => g !== f));
    chosen.set(f.group, s);
    heldOut.set(f.group, await scorer.metrics(s, ids));
  }
  const all = await choose(folds);
  const stable: Record<string, boolean> = {};
  const whole: Record<string, unknown> = { ...all };
  for (const k of lever.knobs) {
    const vals = new Set([...chosen.values()].map((s) => s[k.name]));
    stable[k.name] = vals.size === 1 && vals.has(all[k.name]!);
    if (!stable[k.name]) whole[k.name] = lever.base[k.name];
  }
  return { lever, folds, chosen, heldOut, whole: whole as Setting, all, stable };
}

// ---------------------------------------------------------------------------------------------
// Report

const ALPHA_METRICS = [
  ['sad', 'SAD', 1],
  ['grad', 'Grad', 1],
  ['mse', 'MSE×1e3', 1e3],
  ['maeWhole', 'MAE whole', 1],
  ['sadBg', 'SAD on trimap bg', 1],
  ['sadFg', 'SAD on trimap fg', 1],
] as const;
const MASK_METRICS = [
  ['iou', 'IoU', 1],
  ['boundaryF', 'boundary F', 1],
  ['mae', 'MAE', 1],
  ['fpMass', 'MAE on bg (kept)', 1],
  ['fnMass', 'MAE on subject (lost)', 1],
] as const;

function fmt(v: number, digits: number): string {
  return Number.isFinite(v) ? v.toFixed(digits) : '–';
}
const digitsFor = (v: number): number => (Math.abs(v) >= 10 ? 1 : Math.abs(v) >= 1 ? 2 : Math.abs(v) >= 0.1 ? 3 : 4);

function cell(values: number[], scale: number): string {
  const s = spread(values.map((v) => v * scale));
  const d = digitsFor(s.mean);
  return `${fmt(s.mean, d)} ± ${fmt(s.sd, d)}`;
}

function categoriesOf(items: readonly EvalItem[], dataset: Dataset): string[] {
  return [...new Set(items.filter((i) => i.cv.dataset === dataset).map((i) => i.cv.category))];
}

function render(results: readonly LeverResult[], items: readonly EvalItem[], baseline: string): string {
  const lines: string[] = [];
  const catOf = new Map(items.map((i) => [i.cv.id, i.cv.category]));
  for (const dataset of ['alpha', 'mask'] as const) {
    const rs = results.filter((r) => r.folds.some((f) => f.dataset === dataset));
    if (rs.length === 0) continue;
    const metrics = dataset === 'alpha' ? [...ALPHA_METRICS] : [...MASK_METRICS];
    const colour = dataset === 'alpha' && rs.some((r) => r.lever.loss === haloLoss);
    lines.push(
      `\n### ${dataset === 'alpha' ? 'alphamatting (leave one photo out; unknown region unless "whole")' : 'DAVIS (leave one sequence out)'}: held-out mean ± SD across folds\n`,
    );
    const head = ['lever', 'folds', ...metrics.map((m) => m[1]), ...(colour ? ['halo bg-ref*'] : [])];
    lines.push(`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`);
    for (const r of rs) {
      const folds = r.folds.filter((f) => f.dataset === dataset);
      const row = [r.lever.name, String(folds.length), ...metrics.map(([k, , sc]) => cell(foldMeans(folds, r.heldOut, k), sc))];
      if (colour) row.push(r.lever.loss === haloLoss ? cell(foldMeans(folds, r.heldOut, 'halo'), 1) : '');
      lines.push(`| ${row.join(' | ')} |`);
    }
    // Per category: the selection metric, mean ± SD over the category's folds, and the paired change vs the baseline.
    const key = dataset === 'alpha' ? 'sad' : 'boundaryF';
    const cats = categoriesOf(items, dataset);
    const base = rs.find((r) => r.lever.name === baseline);
    lines.push(
      `\nPer category, ${dataset === 'alpha' ? 'SAD' : 'boundary F (IoU in brackets)'}; Δ = paired change vs \`${baseline}\` (\\* beyond noise: |Δ| > 2 SE)\n`,
    );
    lines.push(`| lever | ${cats.map((c) => `${c} (${r0Folds(rs[0]!, dataset, c, catOf)})`).join(' | ')} |`, `|---|${cats.map(() => '---:').join('|')}|`);
    for (const r of rs) {
      if (r.lever.loss === haloLoss) continue;
      const cells = cats.map((c) => {
        const folds = r.folds.filter((f) => f.dataset === dataset && catOf.get(f.ids[0]!) === c);
        const v = foldMeans(folds, r.heldOut, key);
        let s = cell(v, 1);
        if (dataset === 'mask') s += ` (${fmt(spread(foldMeans(folds, r.heldOut, 'iou')).mean, 3)})`;
        if (base && base !== r) {
          const b = foldMeans(folds, base.heldOut, key);
          const d = pairedDiff(b, v);
          s += `, Δ ${d.diff >= 0 ? '+' : ''}${fmt(d.diff, digitsFor(d.diff))}${d.beyondNoise ? '*' : ''}`;
        }
        return s;
      });
      lines.push(`| ${r.lever.name} | ${cells.join(' | ')} |`);
    }
  }
  lines.push('\n### Knobs chosen in-fold\n');
  for (const r of results) {
    if (r.lever.knobs.length === 0) continue;
    lines.push(`**${r.lever.name}** (${r.lever.description}):`);
    for (const k of r.lever.knobs) {
      const counts = new Map<string, number>();
      for (const s of r.chosen.values()) counts.set(String(s[k.name]), (counts.get(String(s[k.name])) ?? 0) + 1);
      const list = [...counts.entries()].map(([v, n]) => `${v}×${n}`).join(', ');
      lines.push(
        `- ${k.name}: default ${String(r.lever.base[k.name])}; chosen ${list}; on all folds at once ${String(r.all[k.name])}${r.stable[k.name] ? ' (stable)' : ' (not stable: default kept)'}`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

function r0Folds(r: LeverResult, dataset: Dataset, c: string, catOf: ReadonlyMap<string, string>): number {
  return r.folds.filter((f) => f.dataset === dataset && catOf.get(f.ids[0]!) === c).length;
}

// ---------------------------------------------------------------------------------------------
// Main

interface CvArgs {
  levers: string[] | undefined;
  model: string;
  rounds: number;
  only: string[];
  /** 'stages' (step 1), 'model' (views: TTA, scales) or 'fill' (only compute the cached mattes of `views`). */
  mode: 'stages' | 'model' | 'fill';
  views: string[];
  sizes: number[];
  out: string | undefined;
}

function parseCvArgs(argv: readonly string[]): CvArgs {
  const a: CvArgs = { levers: undefined, model: 'isnet-int8', rounds: 1, only: [], mode: 'stages', sizes: [1280], views: ['1024'], out: undefined };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i] as string;
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) throw new Error(`${k} needs a value`);
      return x;
    };
    if (k === '--cv') continue;
    else if (k === '--levers') a.levers = v().split(',');
    else if (k === '--model') a.model = v();
    else if (k === '--rounds') a.rounds = Number(v());
    else if (k === '--only') a.only.push(...v().split(','));
    else if (k === '--mode') a.mode = v() as CvArgs['mode'];
    else if (k === '--sizes') a.sizes = v().split(',').map(Number);
    else if (k === '--out') a.out = v();
    else if (k === '--views') a.views = v().split(',');
    else
      throw new Error(
        `unknown argument ${k} (--cv [--mode stages|model] [--levers a,b] [--model M] [--rounds N] [--only PREFIX] [--sizes 768,1280] [--out DIR])`,
      );
  }
  return a;
}

/** The composite setting the model levers run on: what step 1 kept (docs/quality.md). */
export const CHOSEN_COMPOSITE: Setting = MATTED;

export async function mainCv(argv: readonly string[]): Promise<void> {
  const t0 = performance.now();
  const args = parseCvArgs(argv);
  const evalDir = findEvalDir(PACKAGE_ROOT);
  const rows = parseManifest(await readFile(path.join(evalDir, 'manifest.csv'), 'utf8')).filter(
    (r) => args.only.length === 0 || args.only.some((p) => r.id.startsWith(p)),
  );
  const items = await loadItems(evalDir, rows);
  const binding = loadBinding();
  const cache = new MatteCache(binding);
  if (args.mode === 'fill') {
    for (const v of args.views) {
      for (const item of items) await cache.matte(matteViews({ views: v }, args.model)[0]!, item.cv.id, item.bytes);
      console.error(`${args.model} ${v}: ${cache.inferences} inferences, ${cache.inferSeconds.toFixed(0)} s`);
    }
    cache.close();
    return;
  }
  const scorer = new Scorer(binding, cache, items, args.model);
  const folds = foldsOf(items.map((i) => i.cv));
  const all = args.mode === 'model' ? modelLevers(CHOSEN_COMPOSITE, args.sizes) : levers();
  const chosen = all.filter((l) => args.levers === undefined || args.levers.includes(l.name));
  const baseline = args.mode === 'model' ? 'single' : 'plain';
  const results: LeverResult[] = [];
  try {
    for (const lever of chosen) {
      const t = performance.now();
      const reference = lever.loss === haloLoss ? { ...lever.base } : args.mode === 'model' ? CHOSEN_COMPOSITE : PLAIN;
      results.push(await crossValidate(scorer, lever, folds, reference, args.rounds));
      console.error(`${lever.name}: ${((performance.now() - t) / 1000).toFixed(0)} s, ${scorer.composites} composites, ${cache.inferences} inferences so far`);
    }
  } finally {
    cache.close();
    scorer.save();
  }
  const seconds = (performance.now() - t0) / 1000;
  const md = [
    `# Cross-validated quality (${new Date().toISOString()})`,
    '',
    `Model ${args.model}; ${items.length} items, ${folds.length} folds; coordinate descent, ${args.rounds} rounds. ` +
      `Machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}. ${seconds.toFixed(0)} s.`,
    render(results, items, baseline),
  ].join('\n');
  process.stdout.write(`${md}\n`);
  const outDir = path.resolve(args.out ?? path.join(PACKAGE_ROOT, 'bench/results'));
  await mkdir(outDir, { recursive: true });
  const name = `quality-cv-${args.mode}-${args.model}`;
  await writeFile(path.join(outDir, `${name}.md`), md);
  await writeFile(
    path.join(outDir, `${name}.json`),
    JSON.stringify(
      {
        meta: { date: new Date().toISOString(), args, seconds, items: items.length, folds: folds.length },
        levers: results.map((r) => ({
          name: r.lever.name,
          description: r.lever.description,
          base: r.lever.base,
          knobs: r.lever.knobs,
          chosen: Object.fromEntries(r.chosen),
          whole: r.whole,
          stable: r.stable,
          heldOut: Object.fromEntries(
            [...r.heldOut].map(([g, m]) => [g, Object.fromEntries([...m].filter(([id]) => r.folds.find((f) => f.group === g)?.ids.includes(id)))]),
          ),
        })),
      },
      (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v),
      1,
    ),
  );
  console.error(`wrote ${outDir}/${name}.{md,json}`);
}
