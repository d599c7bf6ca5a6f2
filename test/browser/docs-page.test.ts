// The docs page at /docs in headless Chromium: Swagger UI, served from this server, renders
// /openapi.json (every documented path appears as an operation), without one request leaving this
// server, without script errors or Content-Security-Policy violations. Screenshot: test/.artifacts/docs.png.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { openApiDocument } from '../../src/web/openapi-document.js';
import { launchBrowser } from '../helpers/browser.js';
import { startTestServer } from '../helpers/server.js';

declare const document: any; // page-side code; the project compiles without the DOM lib

const ARTIFACTS = new URL('../../../test/.artifacts/', import.meta.url).pathname;
mkdirSync(ARTIFACTS, { recursive: true });

t.test('Swagger UI renders every documented operation from local files', async (t) => {
  const { url } = await startTestServer(t);
  const context = await launchBrowser(t);
  context.setDefaultTimeout(120_000); // a hang guard, not an assertion
  const page = await context.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requested.push(r.url()));
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });

  await page.goto(`${url}/docs`);
  await page.waitForSelector('.opblock-summary-path');
  const rendered: string[] = await page.evaluate(() =>
    [...document.querySelectorAll('.opblock')].map((el: any) => {
      const method = el.querySelector('.opblock-summary-method')?.textContent?.trim().toLowerCase();
      const path = el.querySelector('.opblock-summary-path')?.getAttribute('data-path');
      return `${method} ${path}`;
    }),
  );
  const doc = openApiDocument() as { paths: Record<string, Record<string, unknown>> };
  const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method} ${path}`));
  t.same([...rendered].sort(), [...documented].sort(), 'one operation block per documented operation');
  t.match(await page.textContent('.info .title'), /^cutout/, 'the document title');

  // Open the removal operation: its 400 lists remove.bg's error codes.
  await page.click('#operations-Removal-removeBg .opblock-summary');
  await page.waitForSelector('#operations-Removal-removeBg .responses-table');
  t.match(await page.textContent('#operations-Removal-removeBg .responses-table'), /invalid_size/, 'error codes shown');
  await page.screenshot({ path: join(ARTIFACTS, 'docs.png'), fullPage: false });

  const foreign = requested.filter((u) => !u.startsWith(`${url}/`) && !u.startsWith('data:') && !u.startsWith('blob:'));
  t.same(foreign, [], 'no request left this server');
  t.ok(requested.includes(`${url}/openapi.json`), 'the document came from /openapi.json');
  t.same(problems, [], 'no script errors, no CSP violations');
});
