// Cross-validation of the pipeline's tunable knobs on the evaluation set. No I/O.
//
// Folds are whole groups: one alphamatting photo, or one DAVIS sequence (its four frames), so no scene
// is ever both tuned on and scored. For each fold the knobs are chosen on the other folds and the
// chosen setting is scored on the fold left out. Each dataset keeps its own metrics; the objective
// that chooses gives each dataset half the weight and each group within it equal weight, relative to
// a reference setting (so a 5% SAD gain and a 5% J&F error gain count alike).

export type Dataset = 'alpha' | 'mask';

export interface CvItem {
  id: string;
  group: string;
  category: string;
  dataset: Dataset;
}

export interface Fold {
  group: string;
  dataset: Dataset;
  ids: string[];
}

/** Metric values of one item under one setting (sad, grad, …; iou, boundaryF, …). */
export type ItemMetrics = Readonly<Record<string, number>>;
export type MetricsById = ReadonlyMap<string, ItemMetrics>;

/** One fold per group, in order of first appearance. */
export function foldsOf(items: readonly CvItem[]): Fold[] {
  const folds = new Map<string, Fold>();
  for (const it of items) {
    let f = folds.get(it.group);
    if (!f) {
      f = { group: it.group, dataset: it.dataset, ids: [] };
      folds.set(it.group, f);
    } else if (f.dataset !== it.dataset) {
      throw new Error(`group ${it.group} mixes datasets`);
    }
    f.ids.push(it.id);
  }
  return [...folds.values()];
}

/** The loss a setting is chosen by: alpha SAD in the trimap's unknown region; DAVIS 1 − (J + F)/2. */
export function itemLoss(dataset: Dataset, m: ItemMetrics): number {
  if (dataset === 'alpha') return need(m, 'sad');
  return 1 - (need(m, 'iou') + need(m, 'boundaryF')) / 2;
}

function need(m: ItemMetrics, key: string): number {
  const v = m[key];
  if (v === undefined || !Number.isFinite(v)) throw new Error(`metric ${key} is missing`);
  return v;
}

export type Loss = (dataset: Dataset, m: ItemMetrics) => number;

export function foldLoss(fold: Fold, metrics: MetricsById, loss: Loss = itemLoss): number {
  let s = 0;
  for (const id of fold.ids) {
    const m = metrics.get(id);
    if (!m) throw new Error(`no metrics for ${id}`);
    s += loss(fold.dataset, m);
  }
  return s / fold.ids.length;
}

/**
 * The training objective over `folds` (lower is better): per dataset, the mean over its folds of
 * loss ÷ the reference's loss on the same fold; then the mean of the datasets present.
 */
export function objective(folds: readonly Fold[], metrics: MetricsById, reference: MetricsById, loss: Loss = itemLoss): number {
  const per: Record<string, number[]> = {};
  for (const f of folds) {
    const ref = foldLoss(f, reference, loss);
    const own = foldLoss(f, metrics, loss);
    const ratio = ref > 0 ? own / ref : own > 0 ? Infinity : 1;
    (per[f.dataset] ??= []).push(ratio);
  }
  const means = Object.values(per).map(mean);
  return means.length === 0 ? 0 : mean(means);
}

export type KnobValue = number | string | boolean;
export type Setting = Readonly<Record<string, KnobValue>>;

export interface Knob {
  name: string;
  /** Candidate values, the default among them. */
  values: readonly KnobValue[];
}

/** A stable key for memoising a setting's scores. */
export function settingKey(s: Setting): string {
  return JSON.stringify(
    Object.keys(s)
      .sort()
      .map((k) => [k, s[k]]),
  );
}

/**
 * Coordinate descent from `start`: each knob in turn takes its best candidate with the others fixed,
 * for `rounds` passes or until a pass changes nothing. A tie keeps the current value (so the start,
 * usually the defaults, wins ties). `score` is lower-is-better.
 */
export async function coordinateDescent(
  knobs: readonly Knob[],
  start: Setting,
  score: (s: Setting) => Promise<number>,
  rounds = 2,
): Promise<{ setting: Setting; score: number }> {
  let cur: Record<string, KnobValue> = { ...start };
  let best = await score(cur);
  for (let r = 0; r < rounds; r++) {
    let changed = false;
    for (const k of knobs) {
      for (const v of k.values) {
        if (v === cur[k.name]) continue;
        const cand = { ...cur, [k.name]: v };
        const s = await score(cand);
        if (s < best - 1e-12) {
          best = s;
          cur = cand;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  return { setting: cur, score: best };
}

export function mean(xs: readonly number[]): number {
  return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Sample standard deviation (n − 1); 0 for fewer than two values. */
export function stdev(xs: readonly number[]): number {
  if (xs.length < 2) return 0;
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) * (x - m), 0) / (xs.length - 1));
}

/** Per-fold values of a metric on the held-out items: the mean over the fold's items. */
export function foldMeans(folds: readonly Fold[], heldOut: ReadonlyMap<string, MetricsById>, key: string): number[] {
  return folds.map((f) => {
    const m = heldOut.get(f.group);
    if (!m) throw new Error(`no held-out scores for ${f.group}`);
    return mean(f.ids.map((id) => need(m.get(id) ?? {}, key)));
  });
}

export interface Spread {
  mean: number;
  /** Standard deviation across folds. */
  sd: number;
  folds: number;
}

export function spread(values: readonly number[]): Spread {
  return { mean: mean(values), sd: stdev(values), folds: values.length };
}

/**
 * Paired comparison of two levers over the same folds: the mean per-fold difference (b − a), its
 * standard error, and whether it is beyond noise (|diff| > 2 SE; a single fold never is).
 */
export function pairedDiff(a: readonly number[], b: readonly number[]): { diff: number; se: number; beyondNoise: boolean } {
  if (a.length !== b.length) throw new Error('paired values of different lengths');
  const d = a.map((x, i) => (b[i] as number) - x);
  const se = d.length < 2 ? Infinity : stdev(d) / Math.sqrt(d.length);
  const diff = mean(d);
  return { diff, se, beyondNoise: Math.abs(diff) > 2 * se };
}
