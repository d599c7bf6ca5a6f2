// Code, tests, the README and the deploy files cite the docs as `docs/PAGE.md` or `docs/PAGE.md, "Section"`.
// Each cited page must exist and each quoted section must be a heading of it, word for word, so a reader
// who follows a citation lands somewhere. The docs themselves are a reference: no machine paths, no
// measurements dated by a work session.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';

const SCANNED = ['src', 'bench', 'test', 'native', 'README.md', 'deploy'];
const SKIPPED_DIRS = new Set(['node_modules', 'results', '.artifacts', 'build']);
const TEXT = /\.(ts|js|mjs|cjs|cc|cpp|h|hpp|md|yaml|yml|json|sh|txt)$|^Dockerfile/;

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true }).flatMap((entry) => {
    const full = join(path, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) ? [] : filesUnder(full);
    return entry.isFile() && TEXT.test(entry.name) ? [full] : [];
  });
}

/** A citation's section may run over a comment's line break: join the lines, dropping the comment marks. */
function joinCommentLines(text: string): string {
  return text.replace(/[ \t]*\r?\n[ \t]*(?:\/\/+|\*|#)?[ \t]*/g, ' ');
}

const CITATION = /\bdocs\/([\w-]+)\.md(?:,\s*"([^"]+)")?/g;
const headingsOf = new Map<string, Set<string> | null>();
function headings(page: string): Set<string> | null {
  if (!headingsOf.has(page)) {
    const file = join(PACKAGE_ROOT, 'docs', `${page}.md`);
    headingsOf.set(
      page,
      existsSync(file)
        ? new Set(
            readFileSync(file, 'utf8')
              .split('\n')
              .flatMap((line) => /^#{1,6} (.+?)\s*$/.exec(line)?.[1] ?? []),
          )
        : null,
    );
  }
  return headingsOf.get(page)!;
}

t.test('every docs/PAGE.md cited exists, and every cited section is a heading of it', async (t) => {
  const self = join('test', 'unit', 'docs-citations.test.ts');
  let count = 0;
  for (const root of SCANNED) {
    for (const file of filesUnder(join(PACKAGE_ROOT, root))) {
      const where = relative(PACKAGE_ROOT, file);
      if (where === self) continue;
      const text = joinCommentLines(readFileSync(file, 'utf8'));
      for (const [, page, section] of text.matchAll(CITATION)) {
        if (page === 'X' || page === 'PAGE') continue; // how a comment names the form, not a citation
        count++;
        const heads = headings(page!);
        if (heads === null) {
          t.fail(`${where}: docs/${page}.md does not exist`);
          continue;
        }
        if (section !== undefined) {
          t.ok(heads.has(section), `${where}: docs/${page}.md, "${section}" is a heading`);
        } else {
          t.pass(`${where}: docs/${page}.md exists`);
        }
      }
    }
  }
  t.ok(count > 20, `${count} citations found`);
});

// "The twenty-third session", "this session", "session 12", "stop 50": a date only the lab notebook knew.
// (An ONNX Runtime inference session is not one of them.)
const SESSION =
  /\b(this|that|previous|earlier|later) session\b|\b(\w*(fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|teenth|tieth)|\d+(st|nd|rd|th)|(twenty|thirty|forty|fifty)-(first|second|third)) session\b|\bsession \d+\b|\bwork[- ]session\b|\bstop \d+\b/i;
const MACHINE_PATH = /(?<![\w.~-])\/(work|tmp|root|home)\//;

t.test('no page of docs/ names a machine path or dates a figure by a work session', async (t) => {
  const dir = join(PACKAGE_ROOT, 'docs');
  const pages = readdirSync(dir).filter((n) => n.endsWith('.md'));
  t.ok(pages.length > 0, `${pages.length} pages`);
  for (const name of pages) {
    const found: string[] = [];
    readFileSync(join(dir, name), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (MACHINE_PATH.test(line)) found.push(`${i + 1} (machine path): ${line.trim()}`);
        if (SESSION.test(line)) found.push(`${i + 1} (session): ${line.trim()}`);
      });
    t.same(found, [], `docs/${name}: no machine path, no work-session date`);
  }
});
