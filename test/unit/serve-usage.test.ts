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
