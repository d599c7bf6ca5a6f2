#!/usr/bin/env node
// `npm run model [-- --all | NAME...]`: assemble the default (or named) models into models/.
// `npm run model -- --from FILE --int8 …`: quantise a model file of one's own (quantize-file-cli.ts).
import { assembleModel } from '../model/assemble.js';
import { readManifest } from '../model/manifest.js';
import { runQuantizeFileCli } from './quantize-file-cli.js';

const args = process.argv.slice(2);
if (args.some((a) => a === '--from' || a.startsWith('--from=') || a === '--int8')) process.exit(await runQuantizeFileCli(args));
const manifest = readManifest();
const names = args.includes('--all')
  ? Object.keys(manifest.models)
  : args.length > 0
    ? args
    : Object.keys(manifest.models).filter((n) => !manifest.models[n]!.optional);

let failed = false;
for (const name of names) {
  const entry = manifest.models[name];
  if (!entry) {
    console.error(`cutout: unknown model '${name}'`);
    failed = true;
    continue;
  }
  try {
    const started = Date.now();
    const r = assembleModel(name, entry);
    console.log(`cutout: model ${name} ${r.rebuilt ? 'assembled' : 'verified'} → ${r.file} (sha256 ${r.sha256}, ${Date.now() - started} ms)`);
  } catch (err) {
    console.error(`cutout: model ${name}: ${(err as Error).message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
