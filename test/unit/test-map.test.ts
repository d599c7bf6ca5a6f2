// test/README.md maps each src/ module to its test files, one table per folder ("### src/DIR/", then
// "| module | tests |" rows), so a file's test is found from its name. The map must cover every module
// under src/ (*.ts, *.mjs), and each file it names (a test, a helper, a src/ module) must exist.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

const MODULE = /\.(ts|mjs)$/;
/** A file a row names: `unit/x.test.ts`, `helpers/y.ts` (under test/) or `src/z.ts`. */
const NAMED_FILE = /[\w./-]+\.(ts|mjs)\b/g;

function modulesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) return modulesUnder(full);
    return entry.isFile() && MODULE.test(entry.name) ? [relative(PACKAGE_ROOT, full)] : [];
  });
}

interface Row {
  module: string;
  named: string[];
  line: number;
}

function mapRows(readme: string): Row[] {
  const rows: Row[] = [];
  let folder: string | undefined;
  readme.split('\n').forEach((text, i) => {
    const heading = /^### (src\/(?:[\w.-]+\/)*)\s*$/.exec(text);
    if (heading) {
      folder = heading[1];
      return;
    }
    if (text.startsWith('## ')) folder = undefined;
    const [, name = '', tests = ''] = /^\|\s*([^|]+?)\s*\|\s*(.*?)\s*\|\s*$/.exec(text) ?? [];
    if (!folder || name === '' || name === 'module' || /^-+$/.test(name)) return;
    rows.push({ module: folder + name, named: tests.match(NAMED_FILE) ?? [], line: i + 1 });
  });
  return rows;
}

t.test('test/README.md maps every src/ module to test files that exist', async (t) => {
  const rows = mapRows(readFileSync(join(PACKAGE_ROOT, 'test', 'README.md'), 'utf8'));
  const modules = modulesUnder(join(PACKAGE_ROOT, 'src')).sort();
  t.ok(modules.length > 100, `${modules.length} modules under src/`);
  const mapped = new Set(rows.map((r) => r.module));
  t.same(
    modules.filter((m) => !mapped.has(m)),
    [],
    'every module under src/ has a row',
  );
  const stale = rows.filter((r) => !existsSync(join(PACKAGE_ROOT, r.module)));
  t.same(
    stale.map((r) => `line ${r.line}: ${r.module}`),
    [],
    'every row is a module that exists',
  );
  const missing: string[] = [];
  for (const row of rows) {
    for (const name of row.named) {
      const path = name.startsWith('src/') ? join(PACKAGE_ROOT, name) : join(PACKAGE_ROOT, 'test', name);
      if (!existsSync(path)) missing.push(`line ${row.line} (${row.module}): ${name}`);
    }
  }
  t.same(missing, [], 'every file a row names exists');
});
