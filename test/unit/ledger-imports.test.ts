// The LMDB server must not pay for PostgreSQL: outside src/ledger/pg/ nothing imports the `pg` client,
// and the one way in is open-ledger.ts's dynamic import, taken only for a postgres:// URL. A child that
// opens the default (LMDB) ledger through openLedger finds `pg` absent from its loaded modules.
// Also: http/ never imports ledger/.

import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../../../src/', import.meta.url));
const DIST_OPEN = fileURLToPath(new URL('../../src/ledger/open-ledger.js', import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

t.test('only src/ledger/pg/ imports pg, and only open-ledger.ts reaches it, dynamically', async (t) => {
  for (const file of sources(SRC)) {
    const rel = relative(SRC, file);
    const text = readFileSync(file, 'utf8');
    const staticImports = [...text.matchAll(/^import\s[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
    if (!rel.startsWith('ledger/pg/')) {
      t.notOk(staticImports.includes('pg'), `${rel}: no static import of pg`);
      t.notOk(
        staticImports.some((s) => s.includes('/pg/')),
        `${rel}: no static import of ledger/pg/`,
      );
    }
    if (rel.startsWith('http/'))
      t.notOk(
        staticImports.some((s) => s.includes('/ledger/')),
        `${rel}: http/ never imports ledger/`,
      );
    if ([...text.matchAll(/import\(\s*'([^']+)'\s*\)/g)].some((m) => m[1]!.includes('/pg/')))
      t.equal(rel, 'ledger/open-ledger.ts', `${rel}: the one dynamic way in`);
  }
});

t.test('opening the default ledger loads no pg module', async (t) => {
  const script = `
    import { openLedger } from ${JSON.stringify(DIST_OPEN)};
    import { mkdtempSync, rmSync } from 'node:fs';
    import { tmpdir } from 'node:os';
    import { join } from 'node:path';
    import { createRequire } from 'node:module';
    const dir = mkdtempSync(join(tmpdir(), 'cutout-imports-'));
    const ledger = await openLedger({ dataDir: dir });
    await ledger.createAccount({});
    await ledger.close();
    rmSync(dir, { recursive: true, force: true });
    const require = createRequire(import.meta.url);
    console.log(JSON.stringify(Object.keys(require.cache).filter((k) => /node_modules\\/(pg|pg-[a-z-]+)\\//.test(k))));
  `;
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  t.same(JSON.parse(out.trim().split('\n').pop()!), [], 'no pg module in the CommonJS cache');
});
