// `cutout serve --help` and docs/http.md list every flag loadConfig accepts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FLAG_NAMES } from '../../src/config.js';
import { SERVE_USAGE } from '../../src/cli/serve-command.js';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

t.test('every flag is in serve --help and in docs/http.md', async (t) => {
  const httpDoc = readFileSync(join(PACKAGE_ROOT, 'docs', 'http.md'), 'utf8');
  t.ok(FLAG_NAMES.length > 10, 'the flag list is read from config.ts');
  for (const name of FLAG_NAMES) {
    t.match(SERVE_USAGE, new RegExp(`^  --${name}\\b`, 'm'), `--${name} in serve --help`);
    t.match(httpDoc, new RegExp(`\`--${name}\``), `--${name} in docs/http.md`);
  }
});

t.test('what the help cites is there: each docs/X.md, "Section" names a heading of that file', async (t) => {
  const cited = [...SERVE_USAGE.matchAll(/(docs\/[\w-]+\.md)(?:, "([^"]+)")?/g)];
  t.ok(cited.length >= 2, `${cited.length} citations`);
  for (const [, file, section] of cited) {
    const text = readFileSync(join(PACKAGE_ROOT, file!), 'utf8');
    if (section) t.match(text, new RegExp(`^#+ ${section.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'), `${file}, "${section}"`);
  }
});

t.test('--quality says what each level does and costs', async (t) => {
  const block = /^ {2}--quality Q[\s\S]*?(?=^ {2}--)/m.exec(SERVE_USAGE)?.[0] ?? '';
  t.notMatch(block, /README/, 'no table that is not there');
  t.match(block, /fast: the model's mask upscaled, no edge stages/);
  t.match(block, /balanced: \+ guided refinement, matting and foreground\s+colour/);
  t.match(block, /best: \+ the mirrored photo through the model where the mask is unsure/);
  t.match(block, /~0\.8x the time of balanced/, 'what fast saves');
  t.match(block, /~1\.6-2\.2x balanced on a CPU/, 'what best costs');
  t.match(block, /docs\/performance\.md, "Quality levels"/);
});
