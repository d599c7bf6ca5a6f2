// Aggregation of per-item benchmark results and markdown rendering. Pure functions, no I/O.

import type { AlphaScores } from './alpha-metrics.js';
import type { GtType } from './manifest.js';
import type { MaskScores } from './mask-metrics.js';

export interface AlphaItemScores {
  /** Inside the trimap unknown region. */
  unknown: AlphaScores;
  /** Over the whole image. */
  whole: AlphaScores;
  /** Our own halo measures (mean abs RGB error, 0..255, unknown region, composite over green). */
  haloBackdrop?: number;
  haloInput?: number;
}

export interface VariantResult {
  ok: boolean;
  error?: string;
  /** Wall seconds for this variant on this image. */
  seconds?: number;
  /** Prediction size before it was resized to the GT size. */
  predSize?: [number, number];
  alpha?: AlphaItemScores;
  mask?: MaskScores;
}

export interface ItemResult {
  id: string;
  dataset: string;
  category: string;
  gtType: GtType;
  width: number;
  height: number;
  error?: string;
  variants: Record<string, VariantResult>;
}

export interface GroupSummary {
  dataset: string;
  /** null = the whole dataset. */
  category: string | null;
  gtType: GtType;
  variant: string;
  /** Items scored / items in the group. */
  n: number;
  total: number;
  medianSeconds: number;
  /** Means over the scored items. */
  metrics: Record<string, number>;
}

export function mean(xs: readonly number[]): number {
  const v = xs.filter((x) => Number.isFinite(x));
  return v.length === 0 ? Number.NaN : v.reduce((a, b) => a + b, 0) / v.length;
}

export function median(xs: readonly number[]): number {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const m = v.length >> 1;
  return v.length % 2 === 1 ? (v[m] as number) : ((v[m - 1] as number) + (v[m] as number)) / 2;
}

/** Flat metric record of one variant on one item (keys shared by summaries and tables). */
export function flatMetrics(r: VariantResult): Record<string, number> {
  const out: Record<string, number> = {};
  if (r.alpha !== undefined) {
    const { unknown: u, whole: w } = r.alpha;
    Object.assign(out, {
      sad: u.sad,
      mse: u.mse,
      grad: u.grad,
      conn: u.conn,
      maeUnknown: u.mae,
      sadWhole: w.sad,
      mseWhole: w.mse,
      gradWhole: w.grad,
      connWhole: w.conn,
      mae: w.mae,
    });
    if (r.alpha.haloBackdrop !== undefined) out.haloBackdrop = r.alpha.haloBackdrop;
    if (r.alpha.haloInput !== undefined) out.haloInput = r.alpha.haloInput;
  }
  if (r.mask !== undefined) Object.assign(out, { iou: r.mask.iou, boundaryF: r.mask.boundaryF, mae: r.mask.mae });
  return out;
}

/** Per dataset (category null) and per (dataset, category) summaries, for each variant. Datasets are never pooled. */
export function summarize(items: readonly ItemResult[], variants: readonly string[]): GroupSummary[] {
  const out: GroupSummary[] = [];
  const datasets = [...new Set(items.map((i) => i.dataset))];
  for (const dataset of datasets) {
    const inDs = items.filter((i) => i.dataset === dataset);
    const gtType = inDs[0]!.gtType;
    const scopes: Array<string | null> = [null, ...[...new Set(inDs.map((i) => i.category))].sort()];
    for (const category of scopes) {
      const group = category === null ? inDs : inDs.filter((i) => i.category === category);
      for (const variant of variants) {
        const results = group.map((i) => i.variants[variant]).filter((r): r is VariantResult => r?.ok === true);
        const flats = results.map(flatMetrics);
        const keys = [...new Set(flats.flatMap((f) => Object.keys(f)))];
        const metrics: Record<string, number> = {};
        for (const k of keys) metrics[k] = mean(flats.map((f) => f[k] ?? Number.NaN));
        out.push({
          dataset,
          category,
          gtType,
          variant,
          n: results.length,
          total: group.length,
          medianSeconds: median(results.map((r) => r.seconds ?? Number.NaN)),
          metrics,
        });
      }
    }
  }
  return out;
}

function fmt(x: number | undefined, digits: number): string {
  return x === undefined || !Number.isFinite(x) ? '–' : x.toFixed(digits);
}

interface Column {
  title: string;
  get: (s: GroupSummary) => string;
}

function table(rows: readonly GroupSummary[], columns: readonly Column[]): string {
  const head = ['scope', 'variant', 'n', ...columns.map((c) => c.title)];
  const lines = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i < 2 ? '---' : '---:')).join('|')}|`];
  let lastScope = '';
  for (const s of rows) {
    const scope = s.category ?? '**all**';
    const shown = scope === lastScope ? '' : scope;
    lastScope = scope;
    const n = s.n === s.total ? `${s.n}` : `${s.n}/${s.total}`;
    lines.push(`| ${[shown, s.variant, n, ...columns.map((c) => c.get(s))].join(' | ')} |`);
  }
  return lines.join('\n');
}

const m =
  (key: string, digits: number, scale = 1): ((s: GroupSummary) => string) =>
  (s) =>
    fmt(s.metrics[key] === undefined ? undefined : (s.metrics[key] as number) * scale, digits);
const secs = (s: GroupSummary): string => fmt(s.medianSeconds, 2);

export const ALPHA_COLUMNS: readonly Column[] = [
  { title: 'SAD', get: m('sad', 1) },
  { title: 'MSE×1e3', get: m('mse', 1, 1000) },
  { title: 'Grad', get: m('grad', 1) },
  { title: 'Conn', get: m('conn', 1) },
  { title: 'MAE (whole)', get: m('mae', 4) },
  { title: 'halo bg-ref*', get: m('haloBackdrop', 2) },
  { title: 'halo in-ref*', get: m('haloInput', 2) },
  { title: 's/img', get: secs },
];

export const ALPHA_WHOLE_COLUMNS: readonly Column[] = [
  { title: 'SAD', get: m('sadWhole', 1) },
  { title: 'MSE×1e3', get: m('mseWhole', 2, 1000) },
  { title: 'Grad', get: m('gradWhole', 1) },
  { title: 'Conn', get: m('connWhole', 1) },
  { title: 'MAE', get: m('mae', 4) },
];

export const MASK_COLUMNS: readonly Column[] = [
  { title: 'IoU', get: m('iou', 3) },
  { title: 'boundary F', get: m('boundaryF', 3) },
  { title: 'MAE', get: m('mae', 4) },
  { title: 's/img', get: secs },
];

/** Markdown report: one section per dataset (never pooled), rows per category and variant. */
export function renderMarkdown(summaries: readonly GroupSummary[], items: readonly ItemResult[]): string {
  const parts: string[] = [];
  const datasets = [...new Set(summaries.map((s) => s.dataset))];
  for (const dataset of datasets) {
    const rows = summaries.filter((s) => s.dataset === dataset);
    const alpha = rows[0]!.gtType === 'alpha_matte';
    parts.push(`### ${dataset} (${alpha ? 'alpha mattes' : 'binary masks'}, ${rows[0]!.total} items)`);
    if (alpha) {
      parts.push(
        'Trimap unknown region (SAD, Grad, Conn: Σ/1000; MSE: mean ×1e3; lower is better). ' +
          'MAE over the whole image. *halo: our own metric, mean abs RGB error (0..255) of the cut-out over green ' +
          'in the unknown region vs. a backdrop-corrected (bg-ref) / input-colour (in-ref) reference; see docs/quality.md.',
      );
      parts.push(table(rows, ALPHA_COLUMNS));
      parts.push('Whole image:');
      parts.push(
        table(
          rows.filter((r) => r.category === null),
          ALPHA_WHOLE_COLUMNS,
        ),
      );
    } else {
      parts.push('IoU and boundary F (DAVIS J and F, masks binarised at 0.5; higher is better); MAE of the soft matte.');
      parts.push(table(rows, MASK_COLUMNS));
    }
  }
  const failures = items.flatMap((i) => [
    ...(i.error !== undefined ? [`- ${i.id}: ${i.error}`] : []),
    ...Object.entries(i.variants)
      .filter(([, r]) => !r.ok)
      .map(([v, r]) => `- ${i.id} / ${v}: ${r.error ?? 'failed'}`),
  ]);
  if (failures.length > 0) parts.push(`### Failures (${failures.length})\n${failures.join('\n')}`);
  return parts.join('\n\n') + '\n';
}
