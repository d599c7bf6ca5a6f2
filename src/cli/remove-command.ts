// `cutout remove <file|dir>... [-o out] [--size] [--format] [--bg-color]`: batch removal on the local pool.
import fs from 'node:fs';
import { createRemover, RemoveError, type Remover } from '../lib/remove.js';
import { DEFAULT_OPTIONS, OUTPUT_FORMATS, parseQuality, QUALITY_LEVELS, type OutputFormat, type RemoveOptions, type SizeTier } from '../domain/removal.js';
import { checkFlags, parseArgs, type ParsedArgs } from './args.js';
import { collectInputs, RESULT_EXTENSION, resultStems, type ResultStem } from './collect-inputs.js';
import { ConfigError, modelChoice } from '../config.js';
import { MODEL_FAMILIES, parseModelFamily } from '../domain/model-family.js';
import { describeModelWarnings } from './model-warnings.js';
import { parseShadowFlags, SHADOW_FLAGS } from './shadow-flags.js';

const SIZES: Record<string, SizeTier> = {
  preview: 'preview',
  small: 'preview',
  regular: 'preview',
  medium: 'medium',
  hd: 'hd',
  full: 'full',
  '4k': 'full',
  '50mp': '50MP',
  auto: 'full',
};
const FORMATS: ReadonlySet<string> = new Set(OUTPUT_FORMATS);

export const REMOVE_USAGE = `Usage: cutout remove <file|dir>... [-o OUT] [--size full|preview|medium|hd|4k|50MP] [--format png|jpg|webp|zip|auto]
                     [--bg-color HEX] [--channels rgba|alpha] [--shadow none|drop|3D|car [--shadow-opacity 0-100]]
                     [--no-refine] [--quality fast|balanced|best] [--workers N]
                     [--model NAME | --model-file PATH [--model-family F] [--model-descriptor JSON]]
                     [--device auto|cpu|cuda[:N]]
Removes the background of each image (folders are searched recursively) and writes the results
to OUT (default: next to each input, as NAME.cutout.EXT). Non-images are reported and skipped.
--shadow draws a shadow under the subject (docs/shadows.md); its opacity defaults to 90 for car, 50 otherwise.
--model-file runs an ONNX model of your own, of family isnet, u2net, birefnet, rmbg or custom
(CUTOUT_MODEL_FILE, CUTOUT_MODEL_FAMILY; docs/models.md, "A model of your own").`;

const REMOVE_FLAGS = [
  'o',
  'out',
  'size',
  'format',
  'bg-color',
  'channels',
  ...SHADOW_FLAGS,
  'no-refine',
  'quality',
  'workers',
  'model',
  'model-file',
  'model-family',
  'model-descriptor',
  'device',
  'help',
];

/** The inputs found, where each result goes, and what was skipped or could not be read. */
interface RemoveInputs {
  files: string[];
  stems: ResultStem[];
  skipped: string[];
  unreadable: string[];
}

export interface CliIo {
  stdout: NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown };
}

export function parseHexColor(s: string): [number, number, number, number] | null {
  const hex = s.replace(/^#/, '');
  if (!/^([0-9a-f]{3}|[0-9a-f]{4}|[0-9a-f]{6}|[0-9a-f]{8})$/i.test(hex)) return null;
  const full = hex.length <= 4 ? [...hex].map((c) => c + c).join('') : hex;
  const n = (i: number): number => parseInt(full.slice(i, i + 2), 16);
  return [n(0), n(2), n(4), full.length === 8 ? n(6) : 255];
}

function progress(io: CliIo, done: number, total: number, failed: number): void {
  if (!(io.stdout as { isTTY?: boolean }).isTTY) return;
  const width = 30;
  const filled = Math.round((done / Math.max(1, total)) * width);
  io.stdout.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total}${failed ? ` (${failed} failed)` : ''}`);
}

export async function runRemoveCommand(argv: string[], io: CliIo = process): Promise<number> {
  const args = parseArgs(argv, new Set(['no-refine', 'help']));
  const { positionals, flags } = args;
  if (flags.has('help') || positionals.length === 0) {
    (positionals.length === 0 && !flags.has('help') ? io.stderr : io.stdout).write(`${REMOVE_USAGE}\n`);
    return flags.has('help') ? 0 : 2;
  }
  const flagProblem = checkFlags(args, REMOVE_FLAGS);
  if (flagProblem) return usageError(io, flagProblem);
  const options: RemoveOptions = { ...DEFAULT_OPTIONS };
  const size = flags.get('size');
  if (typeof size === 'string') {
    const tier = SIZES[size.toLowerCase()];
    if (!tier) return usageError(io, `unknown --size '${size}'`);
    options.size = tier;
  }
  const format = flags.get('format');
  if (typeof format === 'string') {
    if (!FORMATS.has(format)) return usageError(io, `unknown --format '${format}'`);
    options.format = format as OutputFormat;
  }
  const bg = flags.get('bg-color');
  if (typeof bg === 'string') {
    const c = parseHexColor(bg);
    if (!c) return usageError(io, `--bg-color expects hex like ff0000 or #f00, got '${bg}'`);
    options.bgColor = c;
  }
  const channels = flags.get('channels');
  if (channels === 'alpha' || channels === 'rgba') options.channels = channels;
  else if (channels !== undefined) return usageError(io, `unknown --channels '${String(channels)}'`);
  const shadow = parseShadowFlags(flags);
  if ('error' in shadow) return usageError(io, shadow.error);
  if (shadow.shadow) options.shadow = shadow.shadow;
  if (flags.has('no-refine')) {
    options.refine = false;
    options.decontaminate = false;
  }
  const qualityFlag = flags.get('quality') ?? process.env.CUTOUT_QUALITY;
  if (qualityFlag !== undefined && qualityFlag !== '') {
    const level = parseQuality(qualityFlag);
    if (!level) return usageError(io, `unknown --quality '${String(qualityFlag)}' (expected ${QUALITY_LEVELS.join(', ')})`);
    options.quality = level;
  }
  const outDir = flags.get('o') ?? flags.get('out');
  if (outDir === true) return usageError(io, '-o needs a folder');
  const workersFlag = flags.get('workers');
  const workers = typeof workersFlag === 'string' ? Number(workersFlag) : undefined;
  if (workers !== undefined && !(Number.isInteger(workers) && workers > 0)) return usageError(io, '--workers expects a positive integer');

  const { files, skipped, failed: unreadable } = collectInputs(positionals);
  for (const m of unreadable) io.stderr.write(`cutout: ${m}\n`);
  if (typeof outDir === 'string') fs.mkdirSync(outDir, { recursive: true });
  const stems = resultStems(files, typeof outDir === 'string' ? outDir : undefined);
  const remover = await openRemover(flags, workers, io);
  if (typeof remover === 'number') return remover;
  return removeAll(remover, { files, stems, skipped, unreadable }, options, io);
}

/** The pool for the model flags (or their environment variables), or an exit code once the problem is written. */
async function openRemover(flags: ParsedArgs['flags'], workers: number | undefined, io: CliIo): Promise<Remover | number> {
  const model = flags.get('model');
  if (model === true) return usageError(io, '--model needs a model name (see models/manifest.json)');
  const fileFlags = { 'model-file': 'CUTOUT_MODEL_FILE', 'model-family': 'CUTOUT_MODEL_FAMILY', 'model-descriptor': 'CUTOUT_MODEL_DESCRIPTOR' } as const;
  const given: Partial<Record<keyof typeof fileFlags, string>> = {};
  for (const [flag, env] of Object.entries(fileFlags) as [keyof typeof fileFlags, string][]) {
    const v = flags.get(flag) ?? process.env[env];
    if (v === true) return usageError(io, `--${flag} needs a value`);
    if (v !== undefined && v !== '') given[flag] = v;
  }
  let models: ReturnType<typeof modelChoice>;
  try {
    // The model flags' one rule, serve's (src/config.ts): a bundled model or a file, never both.
    const family = given['model-family'] === undefined ? undefined : parseModelFamily(given['model-family']);
    if (given['model-family'] !== undefined && !family) {
      return usageError(io, `unknown --model-family '${given['model-family']}' (expected ${MODEL_FAMILIES.join(', ')})`);
    }
    models = modelChoice(typeof model === 'string' ? model : undefined, given['model-file'], family, given['model-descriptor']);
  } catch (err) {
    if (err instanceof ConfigError) return usageError(io, err.message);
    throw err;
  }
  const fileOptions = {
    ...(models.modelFile ? { modelFile: models.modelFile } : {}),
    ...(models.modelFamily ? { modelFamily: models.modelFamily } : {}),
    ...(models.modelDescriptor ? { modelDescriptor: models.modelDescriptor } : {}),
  };
  const device = flags.get('device') ?? process.env.CUTOUT_DEVICE;
  if (device === true) return usageError(io, '--device needs a value: auto, cpu, cuda or cuda:N');
  let remover: Remover;
  try {
    remover = await createRemover({ ...(workers ? { workers } : {}), ...(model ? { model } : {}), ...fileOptions, ...(device ? { device } : {}) });
  } catch (err) {
    // Unknown or unassembled model, a bad or missing device, or a pool that cannot start: nothing was processed.
    io.stderr.write(`cutout: ${(err as Error).message}\n`);
    return 1;
  }
  for (const line of describeModelWarnings(remover.pool, 'cutout')) io.stderr.write(`${line}\n`);
  return remover;
}

/** Removes the background of every input, `remover.pool.stats().workers` at a time; the exit code (1 when any failed). */
async function removeAll(remover: Remover, inputs: RemoveInputs, options: RemoveOptions, io: CliIo): Promise<number> {
  const { files, stems, skipped, unreadable } = inputs;
  const renamed: string[] = [];
  let ok = 0;
  let failed = unreadable.length;
  const started = Date.now();
  const queue = files.map((file, i) => ({ file, ...stems[i]! }));
  const total = files.length;
  let done = 0;
  const next = async (): Promise<void> => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
      const { file, stem, natural } = item;
      try {
        let out: Awaited<ReturnType<Remover['remove']>>;
        try {
          out = await remover.remove(fs.readFileSync(file), options);
        } catch (err) {
          // The library sniffs the bytes before anything runs: a non-image is skipped, not a failure.
          if (!(err instanceof RemoveError && err.code === 'invalid_file_type')) throw err;
          skipped.push(`${file}: not a JPEG, PNG or WebP image`);
          continue;
        }
        const dest = `${stem}${RESULT_EXTENSION[out.contentType]}`;
        fs.writeFileSync(dest, out.data);
        if (stem !== natural) renamed.push(`${file} → ${dest} (${natural}.* is an input or another result)`);
        ok++;
      } catch (err) {
        failed++;
        io.stderr.write(`${(io.stdout as { isTTY?: boolean }).isTTY ? '\n' : ''}cutout: ${file}: ${(err as Error).message}\n`);
      } finally {
        done++;
        progress(io, done, total, failed);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: remover.pool.stats().workers }, next));
  } finally {
    await remover.close();
  }
  if ((io.stdout as { isTTY?: boolean }).isTTY) io.stdout.write('\n');
  for (const s of skipped) io.stderr.write(`cutout: skipped ${s}\n`);
  for (const r of renamed) io.stderr.write(`cutout: wrote ${r}\n`);
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  io.stdout.write(`${ok} done, ${failed} failed, ${skipped.length} skipped in ${secs} s\n`);
  // Skipped non-images are not failures; unreadable or failed images are.
  return failed > 0 ? 1 : 0;
}

function usageError(io: CliIo, message: string): number {
  io.stderr.write(`cutout remove: ${message}\n${REMOVE_USAGE}\n`);
  return 2;
}
