// The `cutout model --from FILE --int8 …` command line (also `npm run model -- --from …`: assemble-cli.ts
// hands it over): parses,
// quantises (quantize-file.ts) and prints what was written and how to run it. Exit 0 done, 1 the file
// or the calibration failed, 2 a usage error.
import { parseArgs } from 'node:util';
import { MissingPackageError } from '../model/dev-package.js';
import { ModelFileError } from '../model/families.js';
import { parseModelFamily } from '../domain/model-family.js';
import { loadOnnx } from '../model/onnx-transform.js';
import { photosIn, quantizeModelFile } from '../model/quantize-file.js';
import type { CliIo } from './remove-command.js';

export const QUANTIZE_FILE_USAGE = `usage: cutout model --from FILE --int8 [--model-family isnet|u2net|birefnet|rmbg|custom]
       [--model-descriptor JSON] [--out FILE] [--calibration-photos DIR]
  (in a checkout: npm run model -- --from FILE --int8 …)
  Quantises your own fp32 or fp16 ONNX model file (fp16 widened first) to int8 for the CPU
  (docs/models.md, "A model of your own").
  --calibration-photos: a folder of your own photos (JPEG, PNG, WebP) to calibrate on; default: 35
  photos from Debian packages (apt-get download, cached in models/.calibration-photos).`;

export async function runQuantizeFileCli(args: string[], io: CliIo = process): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        from: { type: 'string' },
        int8: { type: 'boolean' },
        'model-family': { type: 'string' },
        'model-descriptor': { type: 'string' },
        out: { type: 'string' },
        'calibration-photos': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (err) {
    io.stderr.write(`cutout model: ${(err as Error).message}\n${QUANTIZE_FILE_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${QUANTIZE_FILE_USAGE}\n`);
    return 0;
  }
  const file = values.from as string | undefined;
  const familyText = values['model-family'] as string | undefined;
  const family = familyText === undefined ? undefined : parseModelFamily(familyText);
  const usage = !file
    ? '--from needs a model file'
    : !values.int8
      ? '--from FILE needs --int8 (the one conversion of a file there is)'
      : familyText !== undefined && !family
        ? `--model-family must be one of isnet, u2net, birefnet, rmbg, custom, not '${familyText}'`
        : undefined;
  if (usage) {
    io.stderr.write(`cutout model: ${usage}\n${QUANTIZE_FILE_USAGE}\n`);
    return 2;
  }
  try {
    // Before any work: after `npm prune --omit=dev` the ONNX classes are gone, and only that is said.
    loadOnnx();
    const started = Date.now();
    const photosDir = values['calibration-photos'] as string | undefined;
    const r = await quantizeModelFile({
      file: file!,
      family,
      descriptor: values['model-descriptor'] as string | undefined,
      out: values.out as string | undefined,
      photos: photosDir ? photosIn(photosDir) : undefined,
      progress: (text) => io.stdout.write(`cutout model: ${text}\n`),
    });
    const s = r.stats;
    io.stdout.write(
      `cutout model: ${r.out} (int8, family ${r.family}, sha256 ${r.sha256}): ${s.convs} convolutions int8` +
        `${s.relusFolded ? ` (${s.relusFolded} Relus folded)` : ''}, ${s.int8Ops} pooling/resize/concat/add ops on bytes; ` +
        `calibrated on ${r.photos} photos, ${r.tensors} tensors (${r.table}); ${Math.round((Date.now() - started) / 1000)} s\n` +
        `cutout model: run it with: cutout serve --model-file ${r.out} --model-family ${r.family}` +
        `${r.descriptor ? ` (its descriptor: ${r.descriptor})` : ''}\n`,
    );
    return 0;
  } catch (err) {
    const known = err instanceof ModelFileError || err instanceof MissingPackageError;
    io.stderr.write(`cutout model: ${known ? '' : 'failed: '}${(err as Error).message}\n`);
    return 1;
  }
}
